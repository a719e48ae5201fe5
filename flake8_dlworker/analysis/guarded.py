"""Names that the code a worker runs reads, bound only inside ``if __name__ ==
"__main__":``.

A spawned worker re-imports the main script as ``__mp_main__``, which skips the guard:
a dataset's ``__getitem__`` or a ``collate_fn`` defined at module level that reads a
global the guard assigns (``vocab``, ``tokenizer``, ``args``) unpickles fine, then fails
in the worker with ``NameError: name 'vocab' is not defined``.
"""
import ast

from flake8_dlworker.analysis.module import GUARD, is_inverted_guard, is_main_guard

#: the methods of a dataset (or of an object it keeps, a collate or transform object)
#: that run in the worker; the methods they call on ``self`` are followed
WORKER_METHODS = ("__getitem__", "__getitems__", "__iter__", "__next__", "__call__",
                  "__setstate__")
_MAX_CALLS = 20


def guarded_reads(definition, facts):
    """[(name, read Name node, reader)] for each global that code of ``definition`` (a
    module-level function, or a class's worker methods) run in a worker reads, and that
    only the ``__main__`` guard binds; ``reader`` is ``Encoded.__getitem__``."""
    module = facts.module
    if module.stars:  # a name may come from ``from m import *``: not known here
        return []
    found, seen = [], set()
    imported = None  # the names imports outside the guard bind, once needed
    for function, reader in _worker_code(definition, facts):
        scope = facts.scopes.get(function)
        if scope is None:
            continue
        local = _bound_inside(function)
        for node in ast.walk(function):
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
                continue
            if node.id in seen or node.id in local or node.id in facts.declared_global:
                continue
            bindings = facts.lookup(node.id, scope)
            if bindings and all(b.place == GUARD and b.scope is module for b in bindings):
                seen.add(node.id)
                found.append((node.id, node, reader))
            elif not bindings and node.id in module.aliases:  # an import: which one?
                if imported is None:
                    imported = _imported_outside_the_guard(facts.tree)
                if node.id not in imported:
                    seen.add(node.id)
                    found.append((node.id, node, reader))
    return found


def _imported_outside_the_guard(tree):
    """Names that module-level imports outside the ``__main__`` guard bind (in a ``try``
    or an ``if`` too; not a function's own imports)."""
    names, todo = set(), []
    for stmt in tree.body:
        if is_main_guard(stmt):
            todo.extend(stmt.orelse)
        elif is_inverted_guard(stmt):
            todo.extend(stmt.body)
        else:
            todo.append(stmt)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name.split(".")[0]) for a in node.names)
        todo.extend(ast.iter_child_nodes(node))
    return names


def _bound_inside(function):
    """Every name bound anywhere inside ``function``: its own locals, and those of the
    comprehensions, lambdas and functions nested in it (a name read there is theirs)."""
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node is not function:
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name.split(".")[0]) for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


def _worker_code(definition, facts):
    """(function node, its name as read) of the code a worker runs of ``definition``: a
    function and the module-level functions it calls by name, or a class's worker
    methods and the methods they call on ``self``."""
    module = facts.module
    if isinstance(definition, ast.ClassDef):
        scope = facts.scopes.get(definition)
        if scope is None:
            return []
        todo = [name for name in WORKER_METHODS if name in scope.methods]
        prefix = definition.name + "."
        methods = scope.methods
    else:
        todo, prefix, methods = [definition.name], "", None
    out, done = [], set()
    while todo and len(done) < _MAX_CALLS:
        name = todo.pop(0)
        if name in done:
            continue
        done.add(name)
        if methods is not None:
            found = methods.get(name)
            function = found.node if found is not None else None
        else:
            function = next((b.value for b in module.bindings.get(name, ())
                             if isinstance(b.value, (ast.FunctionDef, ast.AsyncFunctionDef))
                             and b.place != GUARD), None)
        if function is None:
            continue
        out.append((function, prefix + name))
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if methods is not None and isinstance(func, ast.Attribute) \
                    and isinstance(func.value, ast.Name) and func.value.id == "self":
                todo.append(func.attr)
            elif methods is None and isinstance(func, ast.Name):
                todo.append(func.id)
    return out


def first_guarded_store(tree, name):
    """The node that first binds ``name`` inside the module's ``__main__`` guard (an
    assignment's target, an import's alias, a definition, a loop's target), or None."""
    for stmt in tree.body:
        if is_main_guard(stmt):
            body = stmt.body
        elif is_inverted_guard(stmt):
            body = stmt.orelse
        else:
            continue
        for inner in body:
            for node in ast.walk(inner):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) \
                        and node.id == name:
                    return node
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                        and node.name == name:
                    return node
                if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                        (alias.asname or alias.name.split(".")[0]) == name
                        for alias in node.names):
                    return node
    return None
