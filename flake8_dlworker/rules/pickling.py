"""DLW102-DLW104: objects a spawned worker cannot receive, traced from the loader call.

Under spawn and forkserver the loader pickles its dataset, sampler, batch sampler,
collate_fn and worker_init_fn into every worker.  Functions and classes pickle by
qualified name, so a lambda (DLW102), a function or class defined in a function
body (DLW103), and one defined only in the ``__main__`` guard or a package's
``__main__.py`` (DLW104) cannot reach a worker.
"""
import ast
import os

from flake8_dlworker.analysis.loaders import (
    forces_fork, is_dataloader_call, may_have_workers, sent_to_workers)
from flake8_dlworker.analysis.module import GUARD, LOCAL, MAIN_FILE
from flake8_dlworker.analysis.names import PARTIAL
from flake8_dlworker.catalog import RULES
from flake8_dlworker.rules import Finding

_MAX_DEPTH = 8
#: callables whose function arguments are called and dropped, never stored
_CONSUMERS = frozenset(("sorted", "min", "max", "sum", "any", "all", "list", "tuple",
                        "set", "frozenset", "len", "print", "filter", "map",
                        "functools.reduce", "reduce"))
_DEFINED_IN = {
    GUARD: ("inside the __main__ guard", "define it at module level above the guard"),
    MAIN_FILE: ("in __main__.py", "move it to an importable module"),
}


def check(facts, method, project):
    seen = set()
    for call, scope, _owner in facts.calls:
        if not is_dataloader_call(call, scope, facts) or not may_have_workers(call):
            continue
        if forces_fork(call):
            continue
        for expr, role in sent_to_workers(call):
            tracer = _Tracer(facts, method, expr, role, project)
            tracer.trace(expr, scope, role, 0)
            for finding in tracer.findings:
                key = finding[:3]
                if key not in seen:
                    seen.add(key)
                    yield finding


def _role_text(role):
    return "part of the dataset" if role == "dataset" else role


class _Tracer:
    """Follows one argument of a loader call to what it carries into the worker."""

    __slots__ = ("facts", "method", "top", "role", "findings", "visited", "project")

    def __init__(self, facts, method, top, role, project):
        self.facts = facts
        self.method = method
        self.top = top          # DLW103/104 are reported at the loader's argument
        self.role = role
        self.findings = []
        self.visited = set()
        self.project = project  # sibling modules, for dataset classes imported from them

    def trace(self, expr, scope, role, depth):
        if depth > _MAX_DEPTH or id(expr) in self.visited:
            return
        self.visited.add(id(expr))
        if isinstance(expr, ast.Lambda):
            self._lambda(expr, role)
        elif isinstance(expr, ast.Name):
            for binding in self.facts.lookup(expr.id, scope):
                self._binding(binding, role, depth)
        elif isinstance(expr, ast.Call):
            self._call(expr, scope, role, depth)
        elif isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
            for elt in expr.elts:
                self.trace(elt, scope, role, depth + 1)
        elif isinstance(expr, ast.Dict):
            for value in expr.values:
                self.trace(value, scope, role, depth + 1)
        elif isinstance(expr, ast.Starred):
            self.trace(expr.value, scope, role, depth + 1)
        elif isinstance(expr, ast.Attribute):
            self._method(expr, scope, depth)

    def _lambda(self, node, role, elsewhere=None):
        """Report at the lambda, or at the loader argument when it lies in another file."""
        at = node
        if elsewhere is not None:
            role = "%s (%s:%d)" % (role, os.path.basename(elsewhere), node.lineno)
            at = self.top
        text = RULES["DLW102"].message.format(role=_role_text(role), method=self.method)
        self.findings.append(Finding(at.lineno, at.col_offset, "DLW102", text))

    def _binding(self, binding, role, depth):
        value = binding.value
        if isinstance(value, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kind = "class" if isinstance(value, ast.ClassDef) else "function"
            self._definition(kind, value.name, binding, role)
            if isinstance(value, ast.ClassDef):
                self._class_attributes(value, depth)
        elif isinstance(value, ast.expr):
            self.trace(value, binding.scope, role, depth + 1)

    def _definition(self, kind, name, binding, role):
        """Report a definition that a worker cannot import, at the loader argument."""
        top = self.top
        role = _role_text(self.role)
        if binding.place == LOCAL:
            text = RULES["DLW103"].message.format(
                kind=kind, name=name, scope=binding.outer, role=role, method=self.method)
            code = "DLW103"
        elif binding.place in _DEFINED_IN:
            where, fix = _DEFINED_IN[binding.place]
            text = RULES["DLW104"].message.format(
                kind=kind, name=name, where=where, role=role, fix=fix)
            code = "DLW104"
        else:
            return
        self.findings.append(Finding(top.lineno, top.col_offset, code, text))

    def _call(self, call, scope, role, depth):
        facts = self.facts
        func = call.func
        qualname = facts.qualname(func, scope)
        if is_dataloader_call(call, scope, facts):
            return
        name = qualname or (func.id if isinstance(func, ast.Name) else None)
        if name in _CONSUMERS and not facts.lookup(name, scope):
            return
        if qualname not in PARTIAL and isinstance(func, ast.Name):
            for binding in facts.lookup(func.id, scope):
                if isinstance(binding.value, ast.ClassDef):
                    self._definition("class", binding.value.name, binding, role)
                    self._class_attributes(binding.value, depth)
        if qualname and "." in qualname:
            self._imported_class(qualname, depth)
        for arg in call.args:
            self.trace(arg, scope, role, depth + 1)
        for kw in call.keywords:
            if kw.arg != "key":  # sorted(key=...) style: called, not stored
                self.trace(kw.value, scope, role, depth + 1)

    def _imported_class(self, qualname, depth):
        """A dataset class imported from a module beside this file."""
        modname, name = qualname.rsplit(".", 1)
        other = self.project.module(modname)
        if other is None:
            return
        for binding in other.module.bindings.get(name, ()):
            if isinstance(binding.value, ast.ClassDef):
                self._class_attributes(binding.value, depth, other)

    def _class_attributes(self, classdef, depth, facts=None):
        """``self.x = lambda ...`` in ``__init__`` of the class or its bases."""
        facts = facts or self.facts
        if depth > _MAX_DEPTH or id(classdef) in self.visited:
            return
        self.visited.add(id(classdef))
        class_scope = facts.scopes.get(classdef)
        if class_scope is None:
            return
        elsewhere = facts.filename if facts is not self.facts else None
        init = class_scope.methods.get("__init__")
        if init is not None:
            for attr, value in init.self_assigns:
                role = "attribute '%s' of %s" % (attr, classdef.name)
                if isinstance(value, ast.Lambda):
                    self._lambda(value, role, elsewhere)
        for base in classdef.bases:
            if isinstance(base, ast.Name):
                for binding in facts.lookup(base.id, class_scope.parent):
                    if isinstance(binding.value, ast.ClassDef):
                        self._class_attributes(binding.value, depth + 1, facts)

    def _method(self, attr, scope, depth):
        """``obj.method`` where ``obj`` is an instance of a class a worker cannot import."""
        instances = []
        if isinstance(attr.value, ast.Call):
            instances.append((attr.value, scope))
        elif isinstance(attr.value, ast.Name):
            instances.extend((b.value, b.scope) for b in self.facts.lookup(attr.value.id, scope))
        for value, value_scope in instances:
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
                continue
            for cls in self.facts.lookup(value.func.id, value_scope):
                if isinstance(cls.value, ast.ClassDef):
                    self._definition("method", "%s.%s" % (cls.value.name, attr.attr),
                                     cls, self.role)
