"""Where an object's attribute is assigned in its class's source: ``self.fh = open(p)``.

The pickle probe knows the live objects on the path to a culprit (``dataset.reader.fh``)
and the attribute names between them; the line the user must change is where the
attribute that keeps the culprit is assigned, in the class of the object that holds it
(its ``__init__`` first, then its other methods, then its base classes in MRO order).
Only the user's own classes count: a library class (``tqdm``'s stream wrapper, a
``ThreadPoolExecutor``'s queue) is passed over for the user's object that keeps it.

Read from the source with ``ast``; nothing is imported or run. Importing this module
imports neither torch nor the rest of the checker: it runs inside the target.
"""
import ast
import os
import sys
import sysconfig
from typing import NamedTuple, Optional


class Assignment(NamedTuple):
    attribute: str          # the attribute's name: "fh"
    file: str               # the class's source file, absolute
    line: int               # the assignment's first line
    where: str              # the method that assigns it: "Reader.__init__"
    col: Optional[int] = None  # the assigned value's column, 0-based
    #: the method's parameter whose value it keeps (``self.db = db``): the caller made
    #: the object, the class only keeps it
    parameter: Optional[str] = None


#: parsed source files: (path, mtime_ns, size) -> ast.Module or None
_TREES = {}


def assignment_on_path(holders):
    """The assignment of the attribute that keeps the culprit: ``holders`` are
    ``(object, attribute name)`` pairs along the path, the outermost first (the dataset
    and ``reader``, the reader and ``fh``). The innermost holder whose class is the
    user's and assigns its attribute answers; None when none does."""
    for obj, name in reversed(holders):
        found = assignment(type(obj), name)
        if found is not None:
            return found
    return None


def assignment(cls, name):
    """Where the user's class ``cls`` (or one of its bases) assigns ``self.<name>``: an
    ``__init__`` along the MRO first, then the other methods along it; an assignment
    of ``None`` only where nothing else assigns it (``self.fh = None`` in ``__init__``,
    opened later by a method)."""
    classes = []
    for klass in getattr(cls, "__mro__", (cls,)):
        path = _source_file(klass) if klass is not object else None
        node = _class_node(_tree(path), klass) if path and is_users(path) else None
        if node is not None:
            classes.append((klass, path, node))
    found = [(klass, path, method, place)
             for inits in (True, False) for klass, path, node in classes
             for method, place in _assigned_in(node, name, inits)]
    found.sort(key=lambda f: f[3][2])  # a value first, None after (a stable sort)
    if not found:
        return None
    klass, path, method, (line, col, _none, parameter) = found[0]
    return Assignment(name, path, line, "%s.%s" % (klass.__name__, method), col, parameter)


def is_users(path):
    """A file of the user's program: not the standard library's, not an installed
    package's."""
    real = os.path.realpath(path)
    if any(part in ("site-packages", "dist-packages") for part in real.split(os.sep)):
        return False
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        root = paths.get(key)
        if root and real.startswith(os.path.realpath(root) + os.sep):
            return False
    return True


def _source_file(klass):
    module = sys.modules.get(getattr(klass, "__module__", None) or "")
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py"):
        return None
    return os.path.abspath(path)


def _tree(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (path, st.st_mtime_ns, st.st_size)
    if key not in _TREES:
        try:
            with open(path, "rb") as handle:
                _TREES[key] = ast.parse(handle.read(), path)
        except (OSError, SyntaxError, ValueError):
            _TREES[key] = None
    return _TREES[key]


def _class_node(tree, klass):
    """The ``ClassDef`` of ``klass``: by its qualified name through the classes and
    functions it is nested in, else by its line, else the one class of its name."""
    if tree is None:
        return None
    parts = [p for p in klass.__qualname__.split(".") if p != "<locals>"]
    level = [tree]
    for part in parts:
        level = [child for node in level for child in ast.iter_child_nodes(node)
                 if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                 and child.name == part]
    found = [n for n in level if isinstance(n, ast.ClassDef)]
    if len(found) > 1:
        line = getattr(klass, "__firstlineno__", None)  # Python 3.13+
        found = [n for n in found if n.lineno == line] or found[-1:]
    if found:
        return found[0]
    named = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == parts[-1]]
    return named[0] if len(named) == 1 else None


def _assigned_in(node, name, inits):
    """(method, (line, column of the value, assigns None)) for each method of the class
    body (its ``__init__`` with ``inits``, else the others in their order) that assigns
    ``self.<name>``."""
    for method in node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or \
                (method.name == "__init__") != inits:
            continue
        args = method.args.posonlyargs + method.args.args
        if not args or any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                           for d in method.decorator_list):
            continue
        found = _self_assignment(method, args[0].arg, name)
        if found is not None:
            yield method.name, found


def _self_assignment(method, self_name, name):
    """(line, column of the value, whether the value is None, the parameter it keeps)
    of the method's first assignment of ``self.<name>`` that is not None, else of its
    first one."""
    args = method.args
    parameters = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    first = None
    for node in _walk_own(method):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets, value = [node.target], node.value
        elif isinstance(node, (ast.With, ast.AsyncWith)):  # with open(p) as self.fh
            targets = [item.optional_vars for item in node.items if item.optional_vars]
            value = None
        else:
            continue
        for target in targets:
            for leaf in _leaves(target):
                if (isinstance(leaf, ast.Attribute) and leaf.attr == name
                        and isinstance(leaf.value, ast.Name) and leaf.value.id == self_name):
                    none = isinstance(value, ast.Constant) and value.value is None
                    given = value.id if isinstance(value, ast.Name) and \
                        value.id in parameters - {self_name} else None
                    at = (leaf.lineno, (value if value is not None else leaf).col_offset,
                          none, given)
                    if not none:
                        return at
                    first = first or at
    return first


def _leaves(target):
    if isinstance(target, (ast.Tuple, ast.List)):
        for item in target.elts:
            yield from _leaves(item)
    elif isinstance(target, ast.Starred):
        yield from _leaves(target.value)
    else:
        yield target


def _walk_own(function):
    """The nodes of ``function``'s body in source order, not those of the functions and
    classes defined in it (their ``self`` is another)."""
    stack = list(reversed(function.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
