"""What one file cannot answer: code imported from the script's own folder.

An unguarded ``main()`` imported from a sibling module still starts workers in
every re-import of the script.  astroid's module resolution finds the sibling's
file (searching only the script's folder, so installed libraries are never
opened); the sibling is then read with the same one-file analysis.  Lazy, and
bounded: at most ``MAX_MODULES`` modules per linted file.
"""
import ast
import os

from flake8_dlworker.analysis.module import analyze_module, is_inverted_guard, is_main_guard
from flake8_dlworker.analysis.triggers import might_start_workers

MAX_MODULES = 8


class Project:
    __slots__ = ("base", "_facts", "_opened", "_loaders", "_beside")

    def __init__(self, filename):
        self.base = os.path.dirname(os.path.abspath(filename or "."))
        self._facts = {}
        self._opened = 0
        self._loaders = {}
        self._beside = {}

    def module(self, modname):
        """The facts of a module of the script's folder, or None."""
        if modname in self._facts:
            return self._facts[modname]
        facts = None
        if self._opened < MAX_MODULES and self.beside(modname):
            path = self._resolve(modname)
            if path is not None:
                self._opened += 1
                facts = _read(path, self)
        self._facts[modname] = facts
        return facts

    def module_with_loaders(self, modname):
        """``module``, for a module whose text passes the plugin's prefilter: only such a
        module can build or return a loader, so no other one is parsed for it."""
        if modname not in self._loaders:
            self._loaders[modname] = False
            if modname in self._facts or self.beside(modname):
                path = self._resolve(modname)
                self._loaders[modname] = path is not None and _mentions_workers(path)
        return self.module(modname) if self._loaders[modname] else None

    def beside(self, modname):
        """A cheap stat before astroid: does the module's top package lie here?"""
        if modname not in self._beside:
            self._beside[modname] = _lies_beside(self.base, modname)
        return self._beside[modname]

    def _resolve(self, modname):
        from astroid import modutils  # heavy: imported only when a sibling is asked for

        try:
            path = modutils.file_from_modpath(modname.split("."), path=[self.base])
        except (ImportError, SyntaxError, ValueError, AttributeError):
            return None
        if not path or not path.endswith(".py"):
            return None
        path = os.path.abspath(path)
        if os.path.dirname(path) != self.base and not path.startswith(self.base + os.sep):
            return None
        return path


def _mentions_workers(path):

    try:
        with open(path, "rb") as handle:
            return might_start_workers(handle.read().decode("utf-8", "replace"))
    except OSError:
        return False


def _read(path, project):
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None
    return analyze_module(tree, path, project)


def top_function(facts, name):
    """The body Scope of a module-level function ``name`` in ``facts``."""
    for binding in facts.module.bindings.get(name, ()):
        if isinstance(binding.value, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return facts.scopes.get(binding.value)
    return None


def reaches_sibling_workers(tree, filename):
    """Cheap look at the top-level statements only, for a file the prefilter rejected:
    an unguarded call to a function imported from a module that lies beside
    ``filename``, or an import of such a module whose text passes the prefilter (its
    factories may hand this file a loader)."""
    imported = _top_imports(tree)
    if not imported:
        return False
    base = os.path.dirname(os.path.abspath(filename or "."))
    return (_calls_sibling_at_top(tree, base, imported)
            or any(_sibling_mentions_workers(base, module)
                   for module in list(dict.fromkeys(imported.values()))[:MAX_MODULES]))


def _top_imports(tree):
    imported = {}
    for stmt in _unguarded_statements(tree.body):
        if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            for alias in stmt.names:
                imported[alias.asname or alias.name] = stmt.module
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                imported[(alias.asname or alias.name).partition(".")[0]] = alias.name
    return imported


def _sibling_mentions_workers(base, modname):
    if not _lies_beside(base, modname):
        return False
    head = os.path.join(base, *modname.split("."))
    for path in (head + ".py", os.path.join(head, "__init__.py")):
        if os.path.isfile(path):
            return _mentions_workers(path)
    return False


def _calls_sibling_at_top(tree, base, imported):
    for stmt in _unguarded_statements(tree.body):
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            continue
        func = stmt.value.func
        while isinstance(func, ast.Attribute):
            func = func.value
        module = imported.get(func.id) if isinstance(func, ast.Name) else None
        if module is not None and _lies_beside(base, module):
            return True
    return False


def _unguarded_statements(body):
    """Module-level statements, and those inside the ``try`` / ``with`` / ``if`` blocks
    around them (``try: main() except KeyboardInterrupt: ...``), guards left out."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, ast.If) and is_main_guard(stmt):
            stack.extend(reversed(stmt.orelse))
        elif isinstance(stmt, ast.If) and is_inverted_guard(stmt):
            stack.extend(reversed(stmt.body))
        elif isinstance(stmt, (ast.If, ast.With, ast.AsyncWith)):
            stack.extend(reversed(stmt.body + getattr(stmt, "orelse", [])))
        elif isinstance(stmt, ast.Try):
            inner = stmt.body + stmt.orelse + stmt.finalbody
            for handler in stmt.handlers:
                inner += handler.body
            stack.extend(reversed(inner))


def _lies_beside(base, modname):
    head = os.path.join(base, modname.partition(".")[0])
    return os.path.isfile(head + ".py") or os.path.isdir(head)
