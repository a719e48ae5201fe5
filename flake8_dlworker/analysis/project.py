"""What one file cannot answer: code imported from the script's own folder.

An unguarded ``main()`` imported from a sibling module still starts workers in
every re-import of the script.  astroid's module resolution finds the sibling's
file (searching only the script's folder and the folders the script itself puts on
``sys.path``, so installed libraries are never opened); the sibling is then read with
the same one-file analysis.  Lazy, and bounded: at most ``MAX_MODULES`` modules per
linted file.
"""
import ast
import os
import re

from flake8_dlworker.analysis.module import (
    MODULE, analyze_module, is_inverted_guard, is_main_guard)
from flake8_dlworker.analysis.names import package_of, record_import
from flake8_dlworker.analysis.triggers import might_start_workers

MAX_MODULES = 8


class Project:
    __slots__ = ("base", "paths", "packages", "_facts", "_opened", "_loaders", "_beside",
                 "_reexports")

    def __init__(self, filename):
        self.base = os.path.dirname(os.path.abspath(filename or "."))
        #: where its imports are looked for: the script's folder, then what it puts on
        #: ``sys.path`` (:meth:`follow_sys_path`)
        self.paths = [self.base]
        #: where its relative imports are looked for (``.pkg.data``, analysis/names.py's
        #: ``relative_module``): the folders that hold the packages of its modules
        self.packages = []
        self._facts = {}
        self._opened = 0
        self._loaders = {}
        self._beside = {}
        self._reexports = {}

    def reexports(self, modname):
        """{name: qualified name} that the top-level imports of a module of the script's
        folder bind, and ``from modname import *`` hands on (``from models import *``
        where ``models`` imports torch's DataLoader): a parse of the module, no analysis;
        its ``__all__`` when it has a literal one."""
        if modname not in self._reexports:
            found = {}
            path = self._resolve(modname) if self.beside(modname) else None
            tree = _parsed(path) if path is not None else None
            if tree is not None:
                public = None
                for stmt in _unguarded_statements(tree.body):
                    if isinstance(stmt, ast.Import) or (
                            isinstance(stmt, ast.ImportFrom) and not stmt.level):
                        record_import(stmt, found)
                    elif isinstance(stmt, ast.Assign) and any(
                            isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
                        try:
                            public = set(ast.literal_eval(stmt.value))
                        except (ValueError, TypeError, SyntaxError):
                            public = set()
                found = {name: target for name, target in found.items()
                         if not name.startswith("_") and (public is None or name in public)}
            self._reexports[modname] = found
        return self._reexports[modname]

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
            self._beside[modname] = any(_lies_beside(path, modname.lstrip("."))
                                        for path in self._folders(modname))
        return self._beside[modname]

    def add_package(self, filename):
        """Look for the relative imports of the module ``filename`` in its package."""
        package = package_of(filename)
        if package is not None and package[0] not in self.packages:
            self.packages.append(package[0])
            self._beside.clear()

    def _folders(self, modname):
        return self.packages if modname.startswith(".") else self.paths

    def follow_sys_path(self, facts):
        """Look for imports in the folders the module ``facts`` adds to ``sys.path`` too
        (``sys.path.insert(0, os.path.join(os.path.dirname(__file__), "lib"))``)."""
        for folder in sys_path_additions(facts):
            if folder not in self.paths:
                self.paths.append(folder)
                self._beside.clear()

    def _resolve(self, modname):
        from astroid import modutils  # heavy: imported only when a sibling is asked for

        folders = self._folders(modname)
        try:
            path = modutils.file_from_modpath(modname.lstrip(".").split("."),
                                              path=list(folders))
        except (ImportError, SyntaxError, ValueError, AttributeError):
            return None
        if not path or not path.endswith(".py"):
            return None
        path = os.path.abspath(path)
        if not any(path.startswith(folder + os.sep) for folder in folders):
            return None
        return path


def _mentions_workers(path):

    try:
        with open(path, "rb") as handle:
            return might_start_workers(handle.read().decode("utf-8", "replace"))
    except OSError:
        return False


def _parsed(path):
    try:
        with open(path, "rb") as handle:
            return ast.parse(handle.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None


def _read(path, project):
    tree = _parsed(path)
    return None if tree is None else analyze_module(tree, path, project)


def top_function(facts, name):
    """The body Scope of a module-level function ``name`` in ``facts``."""
    for binding in facts.module.bindings.get(name, ()):
        if isinstance(binding.value, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return facts.scopes.get(binding.value)
    return None


def module_functions(facts, names):
    """(name, body Scope) of each module-level function (not one under the guard) among
    ``names`` in ``facts``, in the names' order."""
    for name in names:
        for binding in facts.module.bindings.get(name, ()):
            function = binding.value
            if binding.place == MODULE and isinstance(
                    function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scope = facts.scopes.get(function)
                if scope is not None:
                    yield name, scope


def reaches_sibling_workers(tree, filename):
    """Cheap look at the top-level statements only, for a file the prefilter rejected:
    an unguarded call to a function imported from a module that lies beside
    ``filename``, or an import of such a module whose text passes the prefilter (its
    factories may hand this file a loader)."""
    imported = _top_imports(tree)
    if not imported:
        return False
    base = os.path.dirname(os.path.abspath(filename or "."))
    # ``from .train import main`` lies beside the file, in a package only
    package = os.path.isfile(os.path.join(base, "__init__.py"))
    imported = {name: module.lstrip(".") for name, module in imported.items()
                if package or not module.startswith(".")}
    return (_calls_sibling_at_top(tree, base, imported)
            or any(_sibling_mentions_workers(base, module)
                   for module in list(dict.fromkeys(imported.values()))[:MAX_MODULES]))


def _top_imports(tree):
    imported = {}
    for stmt in _unguarded_statements(tree.body):
        if isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.level <= 1:
            for alias in stmt.names:
                imported[alias.asname or alias.name] = "." * stmt.level + stmt.module
        elif isinstance(stmt, ast.ImportFrom) and stmt.level == 1:  # from . import train
            for alias in stmt.names:
                imported[alias.asname or alias.name] = "." + alias.name
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


#: calls whose value is the folder (or path) they are given
_SAME_PATH = frozenset(("os.path.abspath", "os.path.realpath", "os.path.normpath", "str",
                        "os.fspath", "pathlib.Path", "pathlib.PurePath"))
_PATH_METHODS = frozenset(("resolve", "absolute", "expanduser"))


def sys_path_additions(facts):
    """The existing folders a module puts on ``sys.path`` with ``insert``, ``append`` or
    ``extend``, where the path is built from ``__file__`` and literals."""
    found = []
    for call, scope, _owner in facts.calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in ("insert", "append", "extend")
                and facts.qualname(func.value, scope) == "sys.path"):
            continue
        given = call.args[1:2] if func.attr == "insert" else call.args[:1]
        for arg in given:
            values = arg.elts if func.attr == "extend" and isinstance(
                arg, (ast.List, ast.Tuple)) else [arg]
            for value in values:
                folder = _path_of(value, scope, facts, 0)
                if folder is not None and os.path.isdir(folder):
                    found.append(os.path.normpath(folder))
    return found


def _path_of(expr, scope, facts, depth):
    """The absolute path an expression always stands for, else None."""
    if depth > 6:
        return None
    here = os.path.abspath(facts.filename or ".")
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return os.path.join(os.path.dirname(here), expr.value)
    if isinstance(expr, ast.Name):
        if expr.id == "__file__" and not facts.lookup("__file__", scope):
            return here
        return facts.first_bound(expr.id, scope,
                                 lambda value, at: _path_of(value, at, facts, depth + 1))
    if isinstance(expr, ast.Attribute) and expr.attr == "parent":  # Path(__file__).parent
        inner = _path_of(expr.value, scope, facts, depth + 1)
        return os.path.dirname(inner) if inner is not None else None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):  # path / "lib"
        left = _path_of(expr.left, scope, facts, depth + 1)
        right = expr.right
        if left is not None and isinstance(right, ast.Constant) and isinstance(right.value, str):
            return os.path.join(left, right.value)
        return None
    if not isinstance(expr, ast.Call) or not expr.args and not isinstance(
            expr.func, ast.Attribute):
        return None
    func = expr.func
    if isinstance(func, ast.Attribute) and func.attr in _PATH_METHODS and not expr.args:
        return _path_of(func.value, scope, facts, depth + 1)
    qualname = facts.qualname(func, scope)
    args = [_path_of(arg, scope, facts, depth + 1) for arg in expr.args]
    if not args or any(arg is None for arg in args) or any(
            isinstance(arg, ast.Starred) for arg in expr.args) or expr.keywords:
        return None
    if qualname == "os.path.dirname" and len(args) == 1:
        return os.path.dirname(args[0])
    if qualname == "os.path.join":
        joined = args[0]
        for arg, part in zip(expr.args[1:], args[1:]):
            joined = os.path.join(joined, arg.value if isinstance(arg, ast.Constant) else part)
        return joined
    if qualname in _SAME_PATH and len(args) == 1:
        return os.path.normpath(args[0])
    return None


# --- the whole project: which modules hand a class to a loader with workers -------------

#: files that say a folder is a project's top
_PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
#: how far above a module its project's top is looked for
_MAX_LEVELS = 8
#: how many files of a project are read, at most (in the walk's sorted order)
MAX_PROJECT_FILES = 4000
#: folders never walked: installed code, caches, and hidden folders (``.git``, ``.venv``)
_SKIPPED_FOLDERS = frozenset(("__pycache__", "node_modules", "site-packages",
                              "dist-packages"))
_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: per process: project top -> ProjectIndex (flake8 checks one file at a time)
_INDEXES = {}
#: per process: a module's folder -> its project's top
_ROOTS = {}


def forget():
    """List and read the projects' files again from now on."""
    _INDEXES.clear()
    _ROOTS.clear()


def project_root(filename):
    """(top, marked) of the project a module belongs to: the nearest folder above it
    with a ``.git``, ``pyproject.toml``, ``setup.py`` or ``setup.cfg`` (marked), else the
    folder that holds its top package (its own folder for a module outside a package);
    None for installed code (under ``site-packages``)."""
    folder = os.path.dirname(os.path.realpath(filename or "."))
    if folder not in _ROOTS:
        _ROOTS[folder] = _project_root(folder)
    return _ROOTS[folder]


def _project_root(folder):
    parts = folder.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return None
    here = folder
    for _ in range(_MAX_LEVELS):
        if any(os.path.exists(os.path.join(here, marker)) for marker in _PROJECT_MARKERS):
            return here, True
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    while os.path.isfile(os.path.join(folder, "__init__.py")) \
            and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    return folder, False


def named_by_loader_modules(filename, names):
    """The ``names`` that the text of some other module of the project names, where that
    module may build a DataLoader: a cheap first look (the project's files are listed
    and read once per process), before anything is analysed."""
    index = _index(filename)
    return index.named(os.path.realpath(filename), names) if index is not None else set()


def worker_loader_sites(filename, names, words=None):
    """{class name: [(path of the loader's module, line, forces fork, given a
    worker_init_fn)]} for the classes
    of the module ``filename`` named in ``names`` that a module elsewhere in its project
    hands to a DataLoader that may start workers. A module is analysed (once per
    process) only when its text builds a loader and names one of ``words`` (by default
    the classes; a function that returns one of them, too)."""
    index = _index(filename)
    return index.sites(os.path.realpath(filename), names, words) if index is not None else {}


def _index(filename):
    top = project_root(filename)
    if top is None:
        return None
    index = _INDEXES.get(top)
    if index is None:
        index = _INDEXES[top] = ProjectIndex(*top)
    return index


class ProjectIndex:
    """The project's modules that may build a DataLoader, and what each hands to one."""

    __slots__ = ("root", "marked", "_files", "_sites")

    def __init__(self, root, marked):
        self.root = root
        #: a folder without a project's marker is walked only into its packages: it may
        #: be a folder of unrelated scripts (a home or temporary folder)
        self.marked = marked
        self._files = None  # [(path, the identifiers of its text)]
        self._sites = {}    # path -> [(class's module, class line, class name, line, fork)]

    def named(self, path, names):
        wanted, found = set(names), set()
        for other, words in self._loader_files():
            if other != path:
                found |= wanted & words
        return found

    def sites(self, path, names, named_by=None):
        found = {}
        wanted = set(names)
        look_for = set(named_by) if named_by is not None else wanted
        for other, words in self._loader_files():
            if other == path or not look_for & words:
                continue
            for home, _line, name, line, fork, init in self._sites_in(other):
                if home == path and name in wanted:
                    found.setdefault(name, []).append((other, line, fork, init))
        return found

    def _loader_files(self):
        if self._files is None:
            self._files = []
            for path in _project_files(self.root, self.marked):
                try:
                    with open(path, "rb") as handle:
                        text = handle.read().decode("utf-8", "replace")
                except OSError:
                    continue
                if "Loader" in text and might_start_workers(text):
                    self._files.append((path, frozenset(_WORDS.findall(text))))
        return self._files

    def _sites_in(self, path):
        if path not in self._sites:
            self._sites[path] = _handed_classes(path, self.root)
        return self._sites[path]


def _project_files(root, marked):
    count = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_FOLDERS
                         and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))
                         and (marked or os.path.isfile(os.path.join(folder, d, "__init__.py"))))
        for name in sorted(files):
            if name.endswith(".py"):
                count += 1
                if count > MAX_PROJECT_FILES:
                    return
                yield os.path.realpath(os.path.join(folder, name))


def _handed_classes(path, root):
    """(class's module, class line, class name, loader line, forces fork, given a
    ``worker_init_fn``) for each class of another module that the module at ``path``
    hands to a loader with workers; its imports are looked for beside it, in what it adds
    to ``sys.path`` and at the project's top."""
    from flake8_dlworker.analysis import datasets
    from flake8_dlworker.analysis.loaders import (
        argument, forces_fork, is_dataloader_call, may_have_workers, value_of)

    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read(), path)
    except (OSError, SyntaxError, ValueError):
        return []
    project = Project(path)
    facts = analyze_module(tree, path, project)
    project.follow_sys_path(facts)
    if root not in project.paths:
        project.paths.append(root)
    found = []
    for call, scope, _owner in facts.calls:
        if not (is_dataloader_call(call, scope, facts) and may_have_workers(call)):
            continue
        init = value_of(argument(call, "worker_init_fn"))
        init = init is not None and not (isinstance(init, ast.Constant) and init.value is None)
        for dataset in datasets.dataset_classes(call, scope, facts, project):
            if dataset.facts is not facts:
                found.append((os.path.realpath(dataset.facts.filename), dataset.node.lineno,
                              dataset.node.name, call.lineno, forces_fork(call), init))
    return found
