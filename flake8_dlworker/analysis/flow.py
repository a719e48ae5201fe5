"""Values across functions, methods and the modules beside the script.

One-file analysis sees ``loader = build_loader()`` as an unknown call.  This module
answers, for one module at a time and at most once per function:

- what a call runs: a function of this module or of a module beside it, a class's
  ``__init__``, a method reached through ``self``, an instance or a constructor call;
- whether a function returns a DataLoader that may start workers, and which
  ``self.x`` attributes hold one;
- who calls a function, so that a parameter can be followed back to its arguments;
- the keywords a ``**kwargs`` dict carries.

Summaries are memoised per function and per attribute (with a guard against
recursion), so the work per module stays linear in the number of calls.
"""
import ast

from flake8_dlworker.analysis.loaders import is_dataloader_call, may_have_workers
from flake8_dlworker.analysis.values import argparse_defaults, setting_default

_MAX_DEPTH = 6
#: how many summaries (returns_loader, attribute_loader) are being made now. While one
#: is, it answers False to a recursive question about itself, and an answer that rests
#: on that is not memoised; once none is, every summary asked is final, and so is
#: is_worker_loader's answer
_MAKING = [0]


class Target:
    """A function a call runs: ``bound`` when its first parameter is the instance."""

    __slots__ = ("node", "facts", "bound")

    def __init__(self, node, facts, bound):
        self.node = node
        self.facts = facts
        self.bound = bound

    @property
    def scope(self):
        return self.facts.scopes.get(self.node)


class Summaries:
    """Per-module memo of the answers above."""

    __slots__ = ("facts", "_returns", "_attributes", "_callers", "_receivers", "_defaults",
                 "_reach", "instances", "worker_loaders", "init_assigns", "targets")

    def __init__(self, facts):
        self.facts = facts
        self._returns = {}
        #: instance_classes' answers: a name rebound from itself (``x = f(x)``) is asked
        #: again at each depth through each of its bindings
        self.instances = {}
        #: is_worker_loader's answers given while no summary was being made (see there)
        self.worker_loaders = {}
        #: analysis.datasets.init_assigns' answers, by class
        self.init_assigns = {}
        #: resolve_call's answers, by (call, scope, local)
        self.targets = {}
        self._attributes = {}
        self._callers = None
        self._receivers = None
        self._defaults = None
        self._reach = None

    @property
    def may_reach_loaders(self):
        """False when no call here can give back a loader: the module builds none and
        imports nothing from the modules beside it."""
        if self._reach is None:
            facts = self.facts
            self._reach = any(is_dataloader_call(call, scope, facts)
                              for call, scope, _owner in facts.calls) or _imports_beside(facts)
        return self._reach

    def argparse_default(self, expr, scope):
        """(words, default) when ``expr`` reads a setting whose default the project
        states: an argparse option, a config dataclass field (analysis/values.py)."""
        return setting_default(expr, scope, self.facts)

    def argparse_options(self):
        """dest -> (flag, default) of this module's argparse options, read once."""
        if self._defaults is None:
            self._defaults = argparse_defaults(self.facts)
        return self._defaults

    def calls_on(self, name, scope):
        """[(Call, scope)] for the ``name.method(...)`` calls made where ``name`` is
        bound in ``scope``."""
        if self._receivers is None:
            self._receivers = {}
            for call, call_scope, _owner in self.facts.calls:
                func = call.func
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                    self._receivers.setdefault((func.value.id, id(call_scope)), []).append(
                        (call, call_scope))
        return self._receivers.get((name, id(scope)), ())

    def returns_loader(self, target):
        """True when the function gives back a DataLoader that may start workers."""
        node = target.node
        if node not in self._returns:
            self._returns[node] = False  # recursion: assume not while it is asked
            scope = target.scope
            _MAKING[0] += 1
            try:
                self._returns[node] = scope is not None and any(
                    is_worker_loader(value, scope, self.facts, 1) for value in scope.returns)
            finally:
                _MAKING[0] -= 1
        return self._returns[node]

    def attribute_loader(self, classdef, attr):
        """True when some method of the class (or a base here) stores a worker loader in
        ``self.<attr>``."""
        key = (classdef, attr)
        if key not in self._attributes:
            self._attributes[key] = False
            _MAKING[0] += 1
            try:
                self._attributes[key] = any(
                    is_worker_loader(value, scope, self.facts, 1)
                    for value, scope in attribute_values(classdef, attr, self.facts))
            finally:
                _MAKING[0] -= 1
        return self._attributes[key]

    def callers(self, node):
        """[(Call, scope, bound)] for every call in this module that runs ``node``."""
        if self._callers is None:
            self._callers = {}
            facts = self.facts
            for call, scope, _owner in facts.calls:
                for target in resolve_call(call, scope, facts, local=True):
                    if target.facts is facts:
                        self._callers.setdefault(target.node, []).append(
                            (call, scope, target.bound))
        return self._callers.get(node, ())


def _imports_beside(facts):
    project = facts.project
    if project is None:
        return False
    scopes = [facts.module] + list(facts.scopes.values())
    return any(project.beside(target) for scope in scopes for target in scope.aliases.values())


# --- what a call runs ------------------------------------------------------------------

def resolve_call(call, scope, facts, local=False):
    """The Targets a call runs, as far as this module and (unless ``local``) the modules
    beside it that may build a loader say (memoised per module)."""
    memo = facts.summaries.targets
    key = (call, scope, local)
    if key not in memo:
        memo[key] = _resolve_call(call, scope, facts, local)
    return list(memo[key])


def _resolve_call(call, scope, facts, local):
    func = call.func
    found = []
    if isinstance(func, ast.Name):
        for binding in facts.lookup(func.id, scope):
            _definition_target(binding.value, facts, found)
        if not found and not local:
            _imported_target(facts.qualname(func, scope), facts, found)
    elif isinstance(func, ast.Attribute):
        if not local:
            _imported_target(facts.qualname(func, scope), facts, found)
        if not found:
            for cls, cls_facts, skip in instance_classes(func.value, scope, facts, local):
                hit = _find_method(cls, func.attr, cls_facts, skip)
                if hit is not None:
                    found.append(Target(hit, cls_facts, True))
    return found


def _definition_target(value, facts, found):
    if isinstance(value, (ast.FunctionDef, ast.AsyncFunctionDef)):
        found.append(Target(value, facts, False))
    elif isinstance(value, ast.ClassDef):
        init = _find_method(value, "__init__", facts)
        if init is not None:
            found.append(Target(init, facts, True))


def _imported_target(qualname, facts, found):
    """``data.build_loader`` or ``from data import build_loader``: a module beside this."""
    if not qualname or "." not in qualname or facts.project is None:
        return
    modname, name = qualname.rsplit(".", 1)
    other = facts.project.module_with_loaders(modname)
    if other is None:
        return
    for binding in other.module.bindings.get(name, ()):
        _definition_target(binding.value, other, found)


def instance_classes(expr, scope, facts, local=False, depth=0):
    """[(ClassDef, facts, skip_self)] that ``expr`` is an instance of: ``self`` in a
    method, ``super()``, ``Cls(...)``, or a name bound to one of these (memoised per
    module: the answer depends on nothing else)."""
    memo = facts.summaries.instances
    key = (id(expr), id(scope), local, depth)
    if key not in memo:
        memo[key] = _instance_classes(expr, scope, facts, local, depth)
    return list(memo[key])


def _instance_classes(expr, scope, facts, local, depth):
    found = []
    if depth > _MAX_DEPTH:
        return found
    if isinstance(expr, ast.Name):
        if expr.id == "self":
            method = enclosing_method(scope)
            if method is not None:
                found.append((method.cls, facts, False))
                return found
        for binding in facts.lookup(expr.id, scope):
            if isinstance(binding.value, ast.expr):
                found.extend(instance_classes(binding.value, binding.scope, facts, local,
                                              depth + 1))
    elif isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Name) and func.id == "super" and not facts.lookup("super", scope):
            method = enclosing_method(scope)
            if method is not None:
                found.append((method.cls, facts, True))
            return found
        if isinstance(func, ast.Name):
            for binding in facts.lookup(func.id, scope):
                if isinstance(binding.value, ast.ClassDef):
                    found.append((binding.value, facts, False))
        if not found and not local:
            qualname = facts.qualname(func, scope)
            if qualname and "." in qualname and facts.project is not None:
                modname, name = qualname.rsplit(".", 1)
                other = facts.project.module_with_loaders(modname)
                if other is not None:
                    for binding in other.module.bindings.get(name, ()):
                        if isinstance(binding.value, ast.ClassDef):
                            found.append((binding.value, other, False))
        if not found:
            found.extend(_returned_instances(expr, scope, facts, local, depth))
    return found


def _returned_instances(call, scope, facts, local, depth):
    """The instances a function gives back: ``CreateDataLoader(opt)`` returning the
    object a class of a third module set up, one more module hop each time."""
    from flake8_dlworker.analysis.values import functions_called

    found = []
    for function, home in functions_called(call.func, scope, facts):
        function_scope = home.scopes.get(function)
        if function_scope is None or (local and home is not facts) or _yields(function):
            continue
        for value in function_scope.returns:
            found.extend(instance_classes(value, function_scope, home, local, depth + 1))
    return found


def enclosing_method(scope):
    while scope is not None and scope.kind == "function":
        if scope.cls is not None:
            return scope
        scope = scope.parent
    return None


def class_chain(classdef, facts):
    """The class and its bases defined in this module, nearest first."""
    chain, queue, seen = [], [classdef], set()
    while queue and len(chain) < _MAX_DEPTH:
        cls = queue.pop(0)
        if id(cls) in seen:
            continue
        seen.add(id(cls))
        chain.append(cls)
        class_scope = facts.scopes.get(cls)
        parent = class_scope.parent if class_scope is not None else facts.module
        for base in cls.bases:
            if isinstance(base, ast.Name):
                for binding in facts.lookup(base.id, parent):
                    if isinstance(binding.value, ast.ClassDef):
                        queue.append(binding.value)
    return chain

    return class_chain(classdef, facts)


def _find_method(classdef, name, facts, skip_self=False):
    for cls in class_chain(classdef, facts)[1 if skip_self else 0:]:
        class_scope = facts.scopes.get(cls)
        if class_scope is not None and name in class_scope.methods:
            return class_scope.methods[name].node
    return None


def attribute_values(classdef, attr, facts):
    """(value, method scope) for each ``self.<attr> = value`` in any method of the class
    or of its bases defined in the same module."""
    found = []
    for cls in class_chain(classdef, facts):
        class_scope = facts.scopes.get(cls)
        if class_scope is None:
            continue
        for method in class_scope.methods.values():
            for name, value in method.self_assigns:
                if name == attr:
                    found.append((value, method))
    return found


# --- loaders ---------------------------------------------------------------------------

def is_worker_loader(expr, scope, facts, depth=0):
    """True when ``expr`` is a torch DataLoader that may start workers: built here,
    returned by a function or method, kept on ``self``, or passed through
    ``accelerator.prepare``."""
    if _MAKING[0]:
        return _is_worker_loader(expr, scope, facts, depth)
    memo = facts.summaries.worker_loaders
    key = (expr, scope, depth)
    if key not in memo:
        memo[key] = _is_worker_loader(expr, scope, facts, depth)
    return memo[key]


def _is_worker_loader(expr, scope, facts, depth):
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, ast.IfExp):  # enumerate(train if training else val)
        return any(is_worker_loader(branch, scope, facts, depth + 1)
                   for branch in (expr.body, expr.orelse))
    if isinstance(expr, ast.Call):
        if is_dataloader_call(expr, scope, facts):
            return may_have_workers(expr)
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr == "prepare":
            if any(is_worker_loader(arg, scope, facts, depth + 1) for arg in expr.args):
                return True
        if not facts.summaries.may_reach_loaders:
            return False
        return any(target.facts.summaries.returns_loader(target)
                   for target in resolve_call(expr, scope, facts))
    if isinstance(expr, ast.Name):
        for binding in facts.lookup(expr.id, scope):
            value = binding.value
            if isinstance(value, ast.expr) and is_worker_loader(
                    value, binding.scope, facts, depth + 1):
                return True
        return False
    if isinstance(expr, ast.Attribute):
        if not facts.summaries.may_reach_loaders:
            return False
        return any(cls_facts.summaries.attribute_loader(cls, expr.attr)
                   for cls, cls_facts, _skip in instance_classes(expr.value, scope, facts))
    return False


# --- arguments -------------------------------------------------------------------------

def default_for_parameter(function, name):
    args = function.args
    positional = args.posonlyargs + args.args
    for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        if arg.arg == name:
            return default
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        if arg.arg == name:
            return default
    return None


def keywords(call, scope, facts, depth=0):
    """(name, value, scope) for the keywords of a call, ``**d`` opened (see below)."""
    found = [(kw.arg, kw.value, scope) for kw in call.keywords if kw.arg is not None]
    return found + unpacked_keywords(call, scope, facts, depth)


def unpacked_keywords(call, scope, facts, depth=0):
    """(name, value, scope) for what the call's ``**d`` carry, where ``d`` is a dict
    literal, a ``dict(...)`` call, a name bound to one, or a function's ``**kwargs``
    filled by its callers."""
    found = []
    for kw in call.keywords:
        if kw.arg is None and depth < _MAX_DEPTH:
            found.extend(_dict_items(kw.value, scope, facts, depth + 1))
    return found


def _dict_items(expr, scope, facts, depth):
    found = []
    if depth > _MAX_DEPTH:
        return found
    if isinstance(expr, ast.Dict):
        for key, value in zip(expr.keys, expr.values):
            if key is None:
                found.extend(_dict_items(value, scope, facts, depth + 1))
            elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                found.append((key.value, value, scope))
    elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) \
            and expr.func.id == "dict" and not facts.lookup("dict", scope):
        found.extend(keywords(expr, scope, facts, depth + 1))
    elif isinstance(expr, ast.Name):
        for binding in facts.lookup(expr.id, scope):
            value = binding.value
            if isinstance(value, ast.expr):
                found.extend(_dict_items(value, binding.scope, facts, depth + 1))
            elif isinstance(value, ast.arg) and binding.scope.kind == "function":
                found.extend(_collected_keywords(binding.scope.node, value, facts, depth))
    return found


def _collected_keywords(function, param, facts, depth):
    """The keywords callers give to ``function`` that land in its ``**param``."""
    if function.args.kwarg is not param:
        return []
    named = {a.arg for a in function.args.posonlyargs + function.args.args
             + function.args.kwonlyargs}
    found = []
    for call, scope, _bound in facts.summaries.callers(function):
        found.extend(item for item in keywords(call, scope, facts, depth + 1)
                     if item[0] not in named)
    return found


# --- what a call gives back ------------------------------------------------------------

def returned_values(call, scope, facts):
    """(value, scope, facts) for each ``return`` value of the plain function a call runs:
    defined in this module or in a module beside it (``helpers.connect(path)``), not a
    method, a class or a generator function."""
    from flake8_dlworker.analysis.values import functions_called

    found = []
    for function, home in functions_called(call.func, scope, facts):
        function_scope = home.scopes.get(function)
        if function_scope is None or _yields(function):
            continue
        found.extend((value, function_scope, home) for value in function_scope.returns)
    return found


def _yields(function):
    stack = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                 ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return False
