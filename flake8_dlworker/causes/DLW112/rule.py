"""DLW112: a shuffling DistributedSampler whose set_epoch is never called in the epoch loop.

``DistributedSampler`` seeds its shuffle with ``seed + epoch``, and its epoch changes
only through ``set_epoch``. A sampler given to a DataLoader that a ``for epoch in
range(...)`` loop of the same function iterates (or passes to a function) without a
``set_epoch`` call repeats the first epoch's order every epoch. The finding is at the
sampler (where the shuffling sampler is made; the message names the loop). Silent for
``shuffle=False``, for a function without an epoch loop, and wherever the loop calls
``set_epoch`` on the sampler (its name, ``loader.sampler``, any ``...sampler``) itself or
through a function of the module it calls, or hands the sampler itself to a function
defined elsewhere (which may set it: this module cannot tell).
"""
import ast

from flake8_dlworker.analysis.loaders import argument, is_known, literal, positional, value_of
from flake8_dlworker.analysis.scope import assigned_names, walk_scope
from flake8_dlworker.catalog import RULES
from flake8_dlworker.rules import Finding

CODE = "DLW112"
SAMPLERS = frozenset(("torch.utils.data.distributed.DistributedSampler",
                      "torch.utils.data.DistributedSampler"))
#: DistributedSampler(dataset, num_replicas, rank, shuffle, seed, drop_last)
_SHUFFLE_POSITION = 3
_RANGES = ("range", "trange")


def findings(scan):
    if not scan.loaders:
        return ()
    return list(check(scan.loaders, scan.facts))


def check(loaders, facts):
    seen = set()
    for call, scope, _owner in facts.calls:
        if facts.qualname(call.func, scope) not in SAMPLERS or not _shuffles(call, scope, facts):
            continue
        body = scope.node if scope.kind == "function" else facts.tree
        statements = list(walk_scope(body))
        found = _unset_loop(call, scope, loaders, statements, facts)
        if found is not None and (call.lineno, call.col_offset) not in seen:
            seen.add((call.lineno, call.col_offset))
            loop, shown = found
            yield Finding(call.lineno, call.col_offset, CODE, RULES[CODE].message.format(
                line=loop.lineno, sampler=shown))


def _shuffles(call, scope, facts):
    node = next((kw for kw in call.keywords if kw.arg == "shuffle"), None)
    if node is None:
        node = positional(call, _SHUFFLE_POSITION)
    if node is None:
        return True  # torch's default
    value = literal(value_of(node), scope, facts)
    return not is_known(value) or bool(value)


def _mentions(expr, node, names):
    """``expr`` is ``node`` itself, or a name of ``names``, or holds one of them."""
    return any(part is node or (isinstance(part, ast.Name) and part.id in names)
               for part in ast.walk(expr))


def _unset_loop(sampler, scope, loaders, statements, facts):
    """(the epoch loop, how the sampler is named) where a loader given ``sampler``
    is iterated or passed on without a set_epoch call; None when there is none."""
    sampler_names = assigned_names(sampler, statements)
    # and the names of what wraps it: ``batches = BatchSampler(sampler, 4, False)``
    wrapping = set(sampler_names)
    for node in statements:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and _mentions(node.value, sampler, sampler_names):
            wrapping.update(t.id for t in node.targets if isinstance(t, ast.Name))
    inside = {id(node) for node in statements}
    given = []
    for call, loader_scope in loaders:
        if loader_scope is not scope or id(call) not in inside:
            continue
        for name in ("sampler", "batch_sampler"):
            node = argument(call, name)
            if node is not None and _mentions(value_of(node), sampler, wrapping):
                given.append(call)
    if not given:
        return None
    loader_names = set()
    for call in given:
        loader_names |= assigned_names(call, statements)
    wanted = sampler_names | loader_names
    for loop in statements:
        if not _epoch_loop(loop):
            continue
        body = [node for stmt in loop.body for node in [stmt] + list(walk_scope(stmt))]
        if not any((isinstance(node, ast.Name) and node.id in wanted)
                   or any(node is call for call in given) or node is sampler
                   for node in body):
            continue
        if any(_sets_epoch(node, facts, scope, sampler_names)
               or _hands_over(node, sampler_names, facts, scope) for node in body):
            continue
        shown = sorted(sampler_names)[0] if sampler_names else (
            "%s.sampler" % sorted(loader_names)[0] if loader_names else "sampler")
        return loop, shown
    return None


def _epoch_loop(node):
    """``for X in range(...)`` (or ``trange(...)``, ``tqdm(range(...))``)."""
    if not isinstance(node, (ast.For, ast.AsyncFor)) or not isinstance(node.iter, ast.Call):
        return False
    calls = [node.iter] + [a for a in node.iter.args[:1] if isinstance(a, ast.Call)]
    return any(isinstance(c.func, ast.Name) and c.func.id in _RANGES for c in calls)


def _is_set_epoch(node, names):
    """A call of ``set_epoch`` on the sampler's name, on something named a sampler, or
    on a loader's sampler."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "set_epoch"):
        return False
    receiver = node.func.value
    name = receiver.attr if isinstance(receiver, ast.Attribute) else \
        receiver.id if isinstance(receiver, ast.Name) else ""
    return name in names or "sampler" in name.lower()


def _hands_over(node, names, facts, scope):
    """``node`` gives the sampler itself (by its name) to a function this module does
    not define (``train(..., sampler=sampler)`` imported from another module): that
    function may well set its epoch, and this module cannot tell."""
    if not names or not isinstance(node, ast.Call):
        return False
    given = list(node.args) + [kw.value for kw in node.keywords]
    if not any(isinstance(arg, ast.Name) and arg.id in names for arg in given):
        return False
    if isinstance(node.func, ast.Name):
        return not any(isinstance(b.value, (ast.FunctionDef, ast.AsyncFunctionDef))
                       for b in facts.lookup(node.func.id, scope))
    return True


def _sets_epoch(node, facts, scope, names, depth=0):
    """``node`` calls set_epoch on a sampler, or calls a function of the module that
    does (two calls deep)."""
    if _is_set_epoch(node, names):
        return True
    if depth >= 2 or not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return False
    for binding in facts.lookup(node.func.id, scope):
        function = binding.value
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = facts.scopes.get(function)
            if any(_sets_epoch(part, facts, inner or scope, (), depth + 1)
                   for part in ast.walk(function)):
                return True
    return False
