"""DataLoader calls: which are torch's, which may start workers, what they send."""
import ast

from flake8_dlworker.analysis.names import LOADERS

#: DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers,
#:            collate_fn, pin_memory, drop_last, timeout, worker_init_fn, ...)
NUM_WORKERS_POSITION = 5
#: what a loader pickles into every worker, by keyword and position: the worker
#: Process gets the dataset, collate_fn and worker_init_fn; the sampler and batch
#: sampler stay in the main process and only send indices
SENT_TO_WORKERS = {"dataset": 0, "collate_fn": 6, "worker_init_fn": 10}
_MAX_BASES = 4


def is_dataloader_call(node, scope, facts):
    """A torch DataLoader, a loader built on it (webdataset, PyTorch Geometric), or a
    subclass of one defined in this module."""
    if not isinstance(node, ast.Call):
        return False
    key = (node, scope)
    memo = facts.loader_calls
    if key not in memo:
        memo[key] = _is_dataloader_call(node, scope, facts)
    return memo[key]


def _is_dataloader_call(node, scope, facts):
    func = node.func
    if facts.qualname(func, scope) in LOADERS:
        return True
    if isinstance(func, ast.Name):
        return any(isinstance(b.value, ast.ClassDef) and _subclasses_loader(b, facts, 0)
                   for b in facts.lookup(func.id, scope))
    return False


def _subclasses_loader(binding, facts, depth):
    if depth > _MAX_BASES:
        return False
    for base in binding.value.bases:
        if facts.qualname(base, binding.scope) in LOADERS:
            return True
        if isinstance(base, ast.Name) and any(
                isinstance(b.value, ast.ClassDef) and _subclasses_loader(b, facts, depth + 1)
                for b in facts.lookup(base.id, binding.scope)):
            return True
    return False


def _is_zero(expr):
    """A literal 0, or a name the module binds once to 0 (analysis.module marks it)."""
    if getattr(expr, "dlw_constant", None) == 0:
        return True
    return (isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float))
            and expr.value == 0)


def may_have_workers(call):
    """``num_workers`` absent or a literal 0 means none; anything else may be > 0."""
    unknown = False
    for kw in call.keywords:
        if kw.arg == "num_workers":
            return not _is_zero(kw.value)
        if kw.arg is None:
            unknown = True  # **kwargs may carry num_workers
    args = call.args
    for i, arg in enumerate(args):
        if isinstance(arg, ast.Starred):
            return True
        if i == NUM_WORKERS_POSITION:
            return not _is_zero(arg)
    return unknown


def forces_fork(call):
    """``multiprocessing_context="fork"``: nothing is pickled, spawn rules do not apply."""
    for kw in call.keywords:
        if kw.arg == "multiprocessing_context":
            return isinstance(kw.value, ast.Constant) and kw.value.value == "fork"
    return False


def sent_to_workers(call):
    """(expression, role) for each argument the loader pickles into its workers."""
    found = []
    by_keyword = {kw.arg: kw.value for kw in call.keywords if kw.arg}
    for role, position in SENT_TO_WORKERS.items():
        expr = by_keyword.get(role)
        if expr is None and position < len(call.args):
            expr = call.args[position]
            if isinstance(expr, ast.Starred):
                break
        if expr is not None and not (isinstance(expr, ast.Constant) and expr.value is None):
            found.append((expr, role))
    return found


#: DataLoader's positional order after ``dataset`` (torch 2.x signature)
POSITIONS = {"dataset": 0, "batch_size": 1, "shuffle": 2, "sampler": 3, "batch_sampler": 4,
             "num_workers": 5, "collate_fn": 6, "pin_memory": 7, "drop_last": 8,
             "timeout": 9, "worker_init_fn": 10}


def argument(call, name):
    """The expression given for parameter ``name`` (keyword or position), else None.

    The returned node is the ``ast.keyword`` for a keyword (it carries the position of
    ``name=``), or the positional expression itself."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw
    position = POSITIONS.get(name)
    return positional(call, position) if position is not None else None


def positional(call, position):
    """The argument at ``position`` of ``call``; None when there is none, or when a
    ``*args`` before it hides which one it is."""
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return None
        if i == position:
            return arg
    return None


def value_of(node):
    """The expression of what ``argument`` returned."""
    return node.value if isinstance(node, ast.keyword) else node


def has_unknown_arguments(call):
    """``*args`` or ``**kwargs``: any parameter may be set without being seen."""
    return (any(isinstance(a, ast.Starred) for a in call.args)
            or any(kw.arg is None for kw in call.keywords))


_UNKNOWN = object()
#: what ``literal`` answers for an expression whose value it cannot tell
UNKNOWN = _UNKNOWN


def literal(expr, scope, facts, depth=0):
    """The constant an expression always is: a literal, or a name every binding of which
    is the same literal; ``_UNKNOWN`` otherwise."""
    if isinstance(expr, ast.Constant):
        return expr.value
    if isinstance(expr, ast.Name) and depth < 3:
        values = set()
        for binding in facts.lookup(expr.id, scope):
            if not isinstance(binding.value, ast.expr):
                return _UNKNOWN
            value = literal(binding.value, binding.scope, facts, depth + 1)
            if value is _UNKNOWN:
                return _UNKNOWN
            values.add((type(value), value))
        if len(values) == 1:
            return values.pop()[1]
    if isinstance(expr, ast.Subscript) and depth < 3:  # CONFIG["num_workers"]
        key = expr.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            container = _dict_of(expr.value, scope, facts)
            if container is not None:
                value, value_scope = container
                for dict_key, item in zip(value.keys, value.values):
                    if isinstance(dict_key, ast.Constant) and dict_key.value == key.value:
                        return literal(item, value_scope, facts, depth + 1)
    return _UNKNOWN


def _dict_of(expr, scope, facts):
    """(Dict literal, its scope) a name is always bound to, else None."""
    if not isinstance(expr, ast.Name):
        return None
    bindings = facts.lookup(expr.id, scope)
    if len(bindings) == 1 and isinstance(bindings[0].value, ast.Dict):
        return bindings[0].value, bindings[0].scope
    return None


def is_known(value):
    return value is not _UNKNOWN


def literal_int(expr, scope, facts):
    """The int an expression always is (see ``literal``), or None when unknown."""
    value = literal(expr, scope, facts)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def worker_count(call, scope, facts):
    """``num_workers`` as an int when it is known (0 when absent), else None."""
    node = argument(call, "num_workers")
    if node is None:
        return None if has_unknown_arguments(call) else 0
    return literal_int(value_of(node), scope, facts)
