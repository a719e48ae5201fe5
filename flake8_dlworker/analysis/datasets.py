"""The dataset classes behind a loader, and the code that runs inside its workers.

A worker runs the dataset's ``__getitem__`` / ``__iter__`` (and the methods and
module functions they call), the transforms the dataset was given or built in
``__init__``, ``collate_fn`` and ``worker_init_fn``.  A dataset class imported
from a module beside the linted file is read through the project
(analysis/project.py); other imported classes and functions are not followed.
Only the rules that need it call this, and only for loaders with workers, so the
cost stays off the per-file path of files without such loaders.
"""
import ast

from flake8_dlworker.analysis.flow import (
    attribute_values, class_chain, enclosing_method, returned_values)
from flake8_dlworker.analysis.loaders import argument, value_of
from flake8_dlworker.analysis.names import PARTIAL

#: methods a worker calls on the dataset
WORKER_METHODS = ("__getitem__", "__getitems__", "__iter__", "__next__")
#: methods a worker calls on a transform or collate object
CALL_METHODS = ("__call__", "forward")
_MAX_DEPTH = 6
_MAX_FUNCTIONS = 40
#: torch's dataset wrappers pickle the datasets they are given
_WRAPPER_PREFIX = "torch.utils.data."
#: bases that add no behaviour to iteration
_NEUTRAL_BASES = frozenset(("typing.Generic", "typing.Protocol", "abc.ABC"))


class DatasetClass:
    """A class defined in this module whose instance a loader sends to its workers."""

    __slots__ = ("node", "ctor", "ctor_scope", "facts", "ctor_facts")

    def __init__(self, node, ctor, ctor_scope, facts, ctor_facts=None):
        self.node = node              # the ClassDef
        self.ctor = ctor              # the constructor Call the dataset came from
        self.ctor_scope = ctor_scope  # the scope the constructor's arguments resolve in
        self.facts = facts            # the facts of the module that defines the class
        self.ctor_facts = ctor_facts or facts  # the facts the constructor call lives in

    def argument_for(self, init, name):
        """The expression the constructor passed for ``__init__``'s parameter ``name``."""
        if self.ctor is None:
            return None
        for kw in self.ctor.keywords:
            if kw.arg == name:
                return kw.value
        params = [a.arg for a in init.args.posonlyargs + init.args.args][1:]  # after self
        if name in params:
            position = params.index(name)
            for i, arg in enumerate(self.ctor.args):
                if isinstance(arg, ast.Starred):
                    return None
                if i == position:
                    return arg
        return None


def dataset_classes(call, scope, facts, project=None):
    """The classes a loader call's dataset is an instance of: defined in this module, or
    (with a project) in a module beside it."""
    node = argument(call, "dataset")
    if node is None:
        return []
    return dataset_classes_of(value_of(node), scope, facts, project)


def dataset_classes_of(expr, scope, facts, project=None):
    """The module classes an expression is (or is bound to) an instance of."""
    found = []
    _instances(expr, scope, facts, 0, found, set(), project)
    return found


def _instances(expr, scope, facts, depth, found, seen, project=None):
    if depth > _MAX_DEPTH or id(expr) in seen:
        return
    seen.add(id(expr))
    if isinstance(expr, ast.Call):
        func = expr.func
        before = len(found)
        if isinstance(func, ast.Name):
            for binding in facts.lookup(func.id, scope):
                if isinstance(binding.value, ast.ClassDef):
                    found.append(DatasetClass(binding.value, expr, scope, facts))
        qualname = facts.qualname(func, scope)
        if qualname and qualname.startswith(_WRAPPER_PREFIX):
            for arg in expr.args:  # Subset(ds, idx), ConcatDataset([a, b])
                _instances(arg, scope, facts, depth + 1, found, seen, project)
            return
        if qualname and "." in qualname and project is not None:
            _imported_class(qualname, expr, scope, found, project, facts)
        if len(found) == before and isinstance(func, ast.Call):
            _returned_classes(func, expr, scope, facts, found)
        elif len(found) == before:  # build_dataset(cfg): what the function returns
            for value, value_scope, home in returned_values(expr, scope, facts):
                _instances(value, value_scope, home, depth + 1, found, seen, project)
    elif isinstance(expr, ast.Name):
        for binding in facts.lookup(expr.id, scope):
            if isinstance(binding.value, ast.expr):
                _instances(binding.value, binding.scope, facts, depth + 1, found, seen, project)
    elif isinstance(expr, (ast.List, ast.Tuple)):
        for elt in expr.elts:
            _instances(elt, scope, facts, depth + 1, found, seen, project)
    elif isinstance(expr, ast.IfExp):  # DataLoader(train_set if training else val_set)
        for branch in (expr.body, expr.orelse):
            _instances(branch, scope, facts, depth + 1, found, seen, project)
    else:
        for value, value_scope in self_attribute_values(expr, scope, facts):
            _instances(value, value_scope, facts, depth + 1, found, seen, project)


def _returned_classes(factory, ctor, scope, facts, found):
    """``make_dataset(8)()``: the classes the factory returns (defined in its body)."""
    for value, value_scope, home in returned_values(factory, scope, facts):
        if isinstance(value, ast.Name):
            for binding in home.lookup(value.id, value_scope):
                if isinstance(binding.value, ast.ClassDef):
                    found.append(DatasetClass(binding.value, ctor, scope, home, facts))


def self_attribute_values(expr, scope, facts):
    """(value, method scope) for each ``self.x = value`` in the class of the method
    ``expr`` (``self.x``) is read in: ``DataLoader(self.train_set)``."""
    if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)
            and expr.value.id == "self"):
        return []
    method = enclosing_method(scope)
    if method is None:
        return []
    return attribute_values(method.cls, expr.attr, facts)


def _imported_class(qualname, ctor, scope, found, project, project_facts):
    """``from data import Squares``: the class, when ``data`` lies beside this file."""
    modname, name = qualname.rsplit(".", 1)
    other = project.module(modname)
    if other is None:
        return
    for binding in other.module.bindings.get(name, ()):
        if isinstance(binding.value, ast.ClassDef):
            found.append(DatasetClass(binding.value, ctor, scope, other, project_facts))


def external_bases(classdef, facts):
    """Qualified names of the bases, anywhere in the module chain, that are imported."""
    found = []
    for cls in class_chain(classdef, facts):
        class_scope = facts.scopes.get(cls)
        parent = class_scope.parent if class_scope is not None else facts.module
        for base in cls.bases:
            if isinstance(base, ast.Subscript):  # Generic[T], IterableDataset[int]
                base = base.value
            qualname = facts.qualname(base, parent)
            if qualname in _NEUTRAL_BASES:
                continue
            if qualname is not None:
                found.append(qualname)
            elif not (isinstance(base, ast.Name) and (base.id == "object" or any(
                    isinstance(b.value, ast.ClassDef) for b in facts.lookup(base.id, parent)))):
                found.append(None)  # a base this module cannot resolve
    return found


def find_method(classdef, name, facts, skip_self=False):
    """(FunctionDef, owning ClassDef) for ``name`` along the module chain, or None."""
    for cls in class_chain(classdef, facts)[1 if skip_self else 0:]:
        class_scope = facts.scopes.get(cls)
        if class_scope is not None:
            method = class_scope.methods.get(name)
            if method is not None:
                return method.node, cls
    return None


def init_assigns(classdef, facts):
    """(attribute, value, __init__ FunctionDef, ClassDef) for each ``self.x = ...`` in the
    ``__init__`` methods along the module chain; the last assignment of an attribute wins
    (memoised per module)."""
    memo = facts.summaries.init_assigns
    if classdef not in memo:
        memo[classdef] = _init_assigns(classdef, facts)
    return list(memo[classdef])


def _init_assigns(classdef, facts):
    found = {}
    for cls in reversed(class_chain(classdef, facts)):
        class_scope = facts.scopes.get(cls)
        init = class_scope.methods.get("__init__") if class_scope is not None else None
        if init is None:
            continue
        for attr, value in init.self_assigns:
            found[attr] = (attr, value, init.node, cls)
        for deleted in _deleted_self_attributes(init.node):
            found.pop(deleted, None)
    return list(found.values())


def _deleted_self_attributes(function):
    for node in ast.walk(function):
        if isinstance(node, ast.Delete):
            for target in node.targets:
                if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id == "self"):
                    yield target.attr


def defines(classdef, facts, names):
    """True when the class or a module base defines one of ``names``."""
    return any(find_method(classdef, name, facts) is not None for name in names)


class WorkerCode:
    """A function that runs in a worker, with a name for messages."""

    __slots__ = ("node", "cls", "label", "facts", "dataset")

    def __init__(self, node, cls, label, facts, dataset=None):
        self.node = node    # FunctionDef
        self.cls = cls      # the ClassDef whose ``self`` it sees, or None
        self.label = label  # "Squares.__getitem__", "pad_batch"
        self.facts = facts  # the facts of the module that defines it
        self.dataset = dataset  # the DatasetClass whose method it is, if any


def _label(node, cls):
    return "%s.%s" % (cls.name, node.name) if cls is not None else node.name


def reachable(starts):
    """The functions in ``starts`` and those they call in their module: ``self.m()``,
    ``super().m()``, and functions called by name."""
    found, queue, seen = [], list(starts), set()
    while queue and len(found) < _MAX_FUNCTIONS:
        code = queue.pop(0)
        if id(code.node) in seen:
            continue
        seen.add(id(code.node))
        found.append(code)
        facts = code.facts
        scope = facts.scopes.get(code.node)
        for node in ast.walk(code.node):
            if not isinstance(node, ast.Call):
                continue
            callee = _callee(node.func, code, scope, facts)
            if callee is not None:
                queue.append(callee)
    return found


def _callee(func, code, scope, facts):
    if isinstance(func, ast.Attribute) and code.cls is not None:
        owner = func.value
        if isinstance(owner, ast.Name) and owner.id == "self":
            hit = find_method(code.cls, func.attr, facts)
        elif (isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name)
              and owner.func.id == "super"):
            hit = find_method(code.cls, func.attr, facts, skip_self=True)
        else:
            return None
        if hit is not None:
            return WorkerCode(hit[0], code.cls, _label(hit[0], hit[1]), facts, code.dataset)
        return None
    if isinstance(func, ast.Name) and scope is not None:
        for binding in facts.lookup(func.id, scope):
            if isinstance(binding.value, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return WorkerCode(binding.value, None, binding.value.name, facts)
    return None


def dataset_worker_methods(dataset):
    """The dataset methods a worker calls, as WorkerCode."""
    found = []
    for name in WORKER_METHODS:
        hit = find_method(dataset.node, name, dataset.facts)
        if hit is not None:
            found.append(WorkerCode(hit[0], dataset.node, _label(hit[0], hit[1]),
                                    dataset.facts, dataset))
    return found


def callables(expr, scope, facts, depth=0):
    """The module functions and ``__call__`` methods an expression stands for when it is
    passed as a callable (``collate_fn=pad``, ``Collate()``, ``partial(f, ...)``), or
    given to a dataset as a transform (``Compose([Normalize(), to_tensor])``)."""
    found = []
    _callables(expr, scope, facts, depth, found, set())
    return found


def _callables(expr, scope, facts, depth, found, seen):
    if depth > _MAX_DEPTH or id(expr) in seen:
        return
    seen.add(id(expr))
    if isinstance(expr, ast.Name):
        for binding in facts.lookup(expr.id, scope):
            value = binding.value
            if isinstance(value, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append(WorkerCode(value, None, value.name, facts))
            elif isinstance(value, ast.expr):
                _callables(value, binding.scope, facts, depth + 1, found, seen)
    elif isinstance(expr, ast.Call):
        func = expr.func
        instance_of = None
        if isinstance(func, ast.Name):
            for binding in facts.lookup(func.id, scope):
                if isinstance(binding.value, ast.ClassDef):
                    instance_of = binding.value
        if instance_of is not None:
            for name in CALL_METHODS:
                hit = find_method(instance_of, name, facts)
                if hit is not None:
                    found.append(WorkerCode(hit[0], instance_of, _label(hit[0], hit[1]), facts))
            return
        if facts.qualname(func, scope) in PARTIAL and expr.args:
            _callables(expr.args[0], scope, facts, depth + 1, found, seen)
            return
        # Compose([...]), a wrapper: what it was given runs in the worker too
        for arg in list(expr.args) + [kw.value for kw in expr.keywords]:
            _callables(arg, scope, facts, depth + 1, found, seen)
    elif isinstance(expr, (ast.List, ast.Tuple)):
        for elt in expr.elts:
            _callables(elt, scope, facts, depth + 1, found, seen)


def transforms(dataset, facts):
    """Transform functions a dataset holds: given to its constructor (resolved in the
    loader's module, ``facts``), or built in ``__init__`` in the class's own module."""
    found = []
    if dataset.ctor is not None:
        for arg in list(dataset.ctor.args) + [kw.value for kw in dataset.ctor.keywords]:
            found.extend(callables(arg, dataset.ctor_scope, facts))
    home = dataset.facts
    for _attr, value, init, _cls in init_assigns(dataset.node, home):
        init_scope = home.scopes.get(init)
        if init_scope is not None and isinstance(value, (ast.Call, ast.List, ast.Tuple)):
            found.extend(callables(value, init_scope, home))
    return found


def loader_callables(call, scope, facts):
    """(role, WorkerCode) for the loader's collate_fn and worker_init_fn."""
    found = []
    for role in ("collate_fn", "worker_init_fn"):
        node = argument(call, role)
        if node is not None:
            for code in callables(value_of(node), scope, facts):
                found.append((role, code))
    return found


def mentions(functions, names):
    """True when any of ``functions`` refers to one of ``names`` (a name or attribute)."""
    for code in functions:
        for node in ast.walk(code.node):
            if isinstance(node, ast.Name) and node.id in names:
                return True
            if isinstance(node, ast.Attribute) and node.attr in names:
                return True
    return False


#: calls a ``worker_init_fn`` makes when all it does is seed the process's generators
SEEDING_CALLS = frozenset((
    "numpy.random.seed", "numpy.random.get_state", "random.seed", "random.getstate",
    "torch.manual_seed", "torch.initial_seed", "torch.seed", "torch.cuda.manual_seed",
    "torch.cuda.manual_seed_all",
))
#: builtins such a function uses to compute a seed
_SEED_BUILTINS = frozenset(("int", "hash", "abs", "print", "str", "len", "range", "sum",
                            "min", "max", "pow"))


def only_seeds(expr, scope, facts):
    """True when a ``worker_init_fn`` (a lambda or functions of this module) only seeds
    the process's random generators: it calls nothing else, binds only its own local
    names and never reaches the dataset or ``get_worker_info()``."""
    if isinstance(expr, ast.Lambda):
        nodes = [(expr.body, scope)]
    else:
        codes = callables(expr, scope, facts)
        if not codes or any(code.cls is not None for code in codes):
            return False  # unreadable, or a callable object that may hold the dataset
        reached = reachable(codes)
        known = {id(code.node) for code in reached}
        nodes = [(code.node, code.facts.scopes.get(code.node)) for code in reached]
    for root, root_scope in nodes:
        for node in ast.walk(root):
            if node is not root and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                      ast.Lambda, ast.ClassDef)):
                return False
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                return False
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if not all(isinstance(t, ast.Name) for t in targets):
                    return False
            if isinstance(node, ast.Name) and (node.id in _SHARDING_WORDS):
                return False
            if isinstance(node, ast.Attribute) and node.attr in _SHARDING_WORDS:
                return False
            if isinstance(node, ast.Call) and not _seeding_call(
                    node, root_scope, facts, None if isinstance(expr, ast.Lambda) else known):
                return False
    return True


#: words that show a function may configure the dataset's copy in the worker
_SHARDING_WORDS = frozenset(("dataset", "get_worker_info", "worker_info", "environ", "setattr"))


def _seeding_call(call, scope, facts, known):
    func = call.func
    if facts.qualname(func, scope) in SEEDING_CALLS:
        return True
    if isinstance(func, ast.Name) and scope is not None:
        bindings = facts.lookup(func.id, scope)
        if not bindings:
            return func.id in _SEED_BUILTINS
        return known is not None and all(id(b.value) in known for b in bindings)
    return False
