"""DLW101: worker processes started from code that every spawned worker re-runs."""
import ast
import os
from collections import deque

from flake8_dlworker.analysis import frameworks
from flake8_dlworker.analysis.flow import (
    Target, instance_classes, is_worker_loader, resolve_call)
from flake8_dlworker.analysis.loaders import is_dataloader_call
from flake8_dlworker.analysis.module import Scope
from flake8_dlworker.analysis.names import PROCESS_CLASSES, STARTERS
from flake8_dlworker.analysis.processes import spawner_forks
from flake8_dlworker.analysis.project import top_function
from flake8_dlworker.catalog import RULES
from flake8_dlworker.rules import Finding

CODE = "DLW101"
#: builtins that iterate what they are given
_ITERATING = frozenset(("iter", "next", "list", "tuple", "set", "frozenset", "enumerate",
                        "zip", "sorted", "sum", "any", "all", "min", "max", "map",
                        "filter", "dict", "reversed"))
#: builtins that take a loader without iterating it
_HARMLESS = frozenset(("len", "print", "isinstance", "issubclass", "type", "id", "repr",
                       "str", "hasattr", "getattr", "setattr", "delattr", "vars", "dir",
                       "hash", "callable", "format", "super"))

#: command-line runners that call the function they are given (``fire.Fire(train)``)
_RUNNERS = frozenset(("fire.Fire", "typer.run", "tyro.cli", "jsonargparse.CLI",
                      "defopt.run", "plac.call", "argh.dispatch_command", "absl.app.run",
                      "clize.run"))


def findings(scan):
    """Not in a notebook (no worker re-runs a kernel's cells), nor under fork."""
    if scan.start_method == "fork" or scan.notebook:
        return ()
    return check(scan.facts, scan.project)


def check(facts, project):
    ops, edges = _operations(facts)
    reaching = _reaching(ops, edges)
    imported = _imported_calls(facts)
    for stmt in facts.top_statements:
        chain = _first_chain(stmt, ops, edges) if stmt in reaching else None
        if chain is None and stmt in imported:
            chain = _imported_chain(imported[stmt], project)
        if chain is not None:
            yield Finding(stmt.lineno, stmt.col_offset, CODE,
                          RULES[CODE].message.format(chain=chain))


def _imported_calls(facts):
    """top statement -> [(module, function)] for its calls to from-imported functions."""
    found = {}
    for call, scope, owner in facts.calls:
        if owner is not None and not isinstance(owner, Scope):
            qualname = facts.qualname(call.func, scope)
            if qualname and "." in qualname and qualname not in STARTERS:
                found.setdefault(owner, []).append(tuple(qualname.rsplit(".", 1)))
    return found


def _reaching(ops, edges):
    """The owners from which some chain of calls reaches a worker start: one walk
    backwards from the starts, so each top statement costs nothing more to ask."""
    callers = {}
    for owner, callees in edges.items():
        for scope, _line in callees:
            callers.setdefault(scope, []).append(owner)
    found = set(ops)
    queue = deque(ops)
    while queue:
        for caller in callers.get(queue.popleft(), ()):
            if caller not in found:
                found.add(caller)
                queue.append(caller)
    return found


def _imported_chain(imported, project):
    for modname, name in imported:
        facts = project.module(modname)
        if facts is None:
            continue
        scope = top_function(facts, name)
        if scope is None:
            continue
        ops, edges = _operations(facts)
        chain = _first_chain(scope, ops, edges, ["%s.%s()" % (modname, name)])
        if chain is not None:
            return chain + " in " + os.path.basename(facts.filename)
    return None


def _first_chain(start, ops, edges, names=()):
    """Shortest chain of same-module calls from ``start`` to a worker start."""
    stmt = start
    queue = deque([(stmt, list(names))])
    seen = {stmt}
    while queue:
        owner, names = queue.popleft()
        if owner in ops:
            return " -> ".join(names + [ops[owner][0]])
        for scope, line in sorted(edges.get(owner, ()), key=lambda edge: edge[1]):
            if scope not in seen:  # the first call in the source first
                seen.add(scope)
                queue.append((scope, names + [_label(scope)]))
    return None


def _operations(facts):
    """owner -> worker-start descriptions; owner -> [(function scope, line)] it calls."""
    ops, edges = {}, {}
    for expr, scope, owner in facts.iterations:
        if owner is not None and _iterates_loader(expr, scope, facts):
            ops.setdefault(owner, []).append(
                "DataLoader iterated at line %d" % expr.lineno)
    for call, scope, owner in facts.calls:
        if owner is None:
            continue
        what = _starts_workers(call, scope, facts)
        if what is not None:
            ops.setdefault(owner, []).append("%s at line %d" % (what, call.lineno))
            continue
        for callee in _run_by(call, scope, facts):
            edges.setdefault(owner, []).append((callee, call.lineno))
        for target in resolve_call(call, scope, facts, local=True):
            callee = target.scope
            if target.facts is facts and callee is not None:
                edges.setdefault(owner, []).append((callee, call.lineno))
    return ops, edges


def _run_by(call, scope, facts):
    """The module's functions that a command-line runner call will call."""
    if facts.qualname(call.func, scope) not in _RUNNERS:
        return []
    given = call.args[:1] + [k.value for k in call.keywords if k.arg in ("component", "main")]
    found = []
    for value in given:
        if isinstance(value, ast.Name):
            callee = top_function(facts, value.id)
            if callee is not None:
                found.append(callee)
    return found


def _iterates_loader(expr, scope, facts):
    if is_worker_loader(expr, scope, facts):
        return True
    # tqdm(loader), enumerate(loader), zip(a, b): iterating the wrapper iterates the loader
    return isinstance(expr, ast.Call) and any(
        is_worker_loader(arg, scope, facts) for arg in expr.args)


def _starts_workers(call, scope, facts):
    func = call.func
    qualname = facts.qualname(func, scope)
    if qualname in STARTERS:
        return None if spawner_forks(call, qualname, scope, facts) else STARTERS[qualname]
    if isinstance(func, ast.Attribute):
        if func.attr == "start" and _is_process(func.value, scope, facts):
            return "Process started"
        if func.attr == "Pool" and _is_context(func.value, scope, facts):
            return "Pool created"
        if func.attr in frameworks.HF_RUNS or func.attr in frameworks.LIGHTNING_RUNS:
            what = _framework_run(call, scope, facts)
            if what is not None:
                return what
    arguments = list(call.args) + [kw.value for kw in call.keywords]
    if not any(is_worker_loader(arg, scope, facts) for arg in arguments):
        return None
    if isinstance(func, ast.Name) and not facts.lookup(func.id, scope) \
            and facts.qualname(func, scope) is None:
        if func.id in _ITERATING:
            return "DataLoader iterated"
        if func.id in _HARMLESS:
            return None
    if is_dataloader_call(call, scope, facts):
        return None
    return "DataLoader passed to %s()" % _call_name(func)


def _call_name(func):
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return "a call"


def _is_process(expr, scope, facts, depth=0):
    if depth > 4:
        return False
    if isinstance(expr, ast.Call):
        if facts.qualname(expr.func, scope) in PROCESS_CLASSES:
            return True
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "Process":
            return _is_context(expr.func.value, scope, facts)
        return _is_process_subclass(expr.func, scope, facts)
    if isinstance(expr, ast.Name):
        return any(isinstance(b.value, ast.expr) and _is_process(b.value, b.scope, facts, depth + 1)
                   for b in facts.lookup(expr.id, scope))
    return False


def _is_process_subclass(func, scope, facts):
    if not isinstance(func, ast.Name):
        return False
    for binding in facts.lookup(func.id, scope):
        if isinstance(binding.value, ast.ClassDef):
            for base in binding.value.bases:
                if facts.qualname(base, binding.scope) in PROCESS_CLASSES:
                    return True
    return False


def _is_context(expr, scope, facts, depth=0):
    """``multiprocessing.get_context(...)`` or a name bound to it."""
    if depth > 4:
        return False
    if isinstance(expr, ast.Call):
        return facts.qualname(expr.func, scope) == "multiprocessing.get_context"
    if isinstance(expr, ast.Name):
        return any(isinstance(b.value, ast.expr) and _is_context(b.value, b.scope, facts, depth + 1)
                   for b in facts.lookup(expr.id, scope))
    return False


def _label(scope):
    if scope.cls is not None:
        return "%s.%s()" % (scope.cls.name, scope.name)
    return scope.name + "()"


def _framework_run(call, scope, facts):
    """``trainer.train()`` (Hugging Face, with workers) or ``trainer.fit(model)``
    (Lightning, with a loader or a ``*_dataloader`` hook that builds one with workers,
    or with a strategy that spawns the ranks)."""
    func = call.func
    if func.attr in frameworks.HF_RUNS:
        trainer = frameworks.constructed(func.value, scope, facts, frameworks.HF_TRAINERS)
        if trainer is not None and frameworks.hf_trainer_workers(*trainer, facts) != 0:
            return "Trainer.%s() called" % func.attr
    trainer = frameworks.constructed(func.value, scope, facts, frameworks.LIGHTNING_TRAINERS) \
        if func.attr in frameworks.LIGHTNING_RUNS else None
    if trainer is not None:
        if frameworks.lightning_spawns(*trainer, facts):  # the ranks are spawned processes
            return "Trainer.%s() called with the ddp_spawn strategy" % func.attr
        given = list(call.args) + [kw.value for kw in call.keywords]
        if any(is_worker_loader(arg, scope, facts) or _hooks_build_loaders(arg, scope, facts)
               for arg in given):
            return "Trainer.%s() called" % func.attr
    return None


def _hooks_build_loaders(expr, scope, facts):
    for cls, cls_facts, _skip in instance_classes(expr, scope, facts):
        class_scope = cls_facts.scopes.get(cls)
        for hook in frameworks.LIGHTNING_HOOKS:
            method = class_scope.methods.get(hook) if class_scope is not None else None
            if method is not None and cls_facts.summaries.returns_loader(
                    Target(method.node, cls_facts, True)):
                return True
    return False
