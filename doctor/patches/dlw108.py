"""DLW108: the dataset keeps a handle that cannot be pickled -> the lazy-open pattern.

- A handle used only in ``__init__`` (read once there, as ``open(path).read()``) is
  dropped from the pickled state: ``__getstate__`` returns the state without it, and
  the workers, which never touch it, get everything else.
- A lock (or other synchronisation object) is remade in ``__setstate__`` when a worker
  unpickles the dataset: made on first use, two threads could each make one.
- Any other handle used in other methods and never again in ``__init__`` is opened on first
  use: ``__init__`` keeps ``None``, each method that uses it opens it when it is still
  ``None``, and ``__getstate__`` drops an open one, so every worker opens its own.
  This needs the opening expression to be rebuildable outside ``__init__``: it may read
  module names, ``self`` attributes, and ``__init__`` parameters that ``__init__``
  also stores on ``self``.

A handle that ``__init__`` keeps using after opening it (a database it fills, an
in-memory one) gets no patch: reopening it in a worker would not give the same
contents, so the fix stays in words.
"""
import re

import libcst as cst

from doctor.patches import _cst

CODE = "DLW108"
STATIC = True
_TEXT = re.compile(r"dataset attribute 'self\.(\w+)'")
#: synchronisation objects: remade when unpickled, never lazily
_SYNC = ("Lock", "RLock", "Semaphore", "BoundedSemaphore", "Condition", "Event")


def _self_attr(node, attr):
    return (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
            and node.value.value == "self" and node.attr.value == attr)


def _uses(node, attr):
    found = []

    class Find(cst.CSTVisitor):
        def visit_Attribute(self, n):
            if _self_attr(n, attr):
                found.append(n)
    node.visit(Find())
    return found


def fix(source, finding, facts):
    match = _TEXT.search(finding.text)
    tree = _cst.Tree(source)
    value = tree.first_at(finding.line, finding.col)
    if not match or value is None:
        return None
    attr = match.group(1)
    assign = next((a for a in tree.ancestors(value) if isinstance(a, cst.Assign)), None)
    init = next((a for a in tree.ancestors(value) if isinstance(a, cst.FunctionDef)), None)
    cls = next((a for a in tree.ancestors(value) if isinstance(a, cst.ClassDef)), None)
    if assign is None or init is None or cls is None or init.name.value != "__init__" \
            or len(assign.targets) != 1 or not _self_attr(assign.targets[0].target, attr):
        return None
    methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)]
    if any(m.name.value in ("__getstate__", "__reduce__", "__reduce_ex__") for m in methods):
        return None
    others = [m for m in methods if m is not init and _uses(m, attr)]
    line_stmt = tree.parents[assign]
    init_uses = [u for u in _uses(init, attr) if u is not assign.targets[0].target]
    getstate = cst.parse_statement(
        'def __getstate__(self):\n    state = self.__dict__.copy()\n'
        '    state[%r] = None  # DLW108: each worker opens its own\n    return state\n' % attr)
    getstate = getstate.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
    if not others:
        new_cls = _insert_after_init(cls, init, getstate)
        return tree.module.deep_replace(cls, new_cls).code
    if init_uses or not isinstance(line_stmt, cst.SimpleStatementLine) \
            or len(line_stmt.body) != 1:
        return None
    expr = _rebuildable(assign.value, init)
    if expr is None:
        return None
    if (_cst.dotted(getattr(expr, "func", None)) or "").split(".")[-1] in _SYNC:
        # a lock made on first use could be made twice by two threads: make it when
        # the worker unpickles the dataset instead
        setstate = cst.parse_statement(
            "def __setstate__(self, state):\n    self.__dict__.update(state)\n"
            "    self.%s = %s\n" % (attr, _cst.code(expr).strip()))
        setstate = setstate.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        new_cls = _insert_after_init(cls, init, getstate)
        init_index = [i for i, st in enumerate(new_cls.body.body) if st is init][0]
        body = list(new_cls.body.body)
        body.insert(init_index + 2, setstate)
        new_cls = new_cls.with_changes(body=new_cls.body.with_changes(body=body))
        return tree.module.deep_replace(cls, new_cls).code
    opener = cst.parse_statement("if self.%s is None:\n    self.%s = %s\n" % (
        attr, attr, _cst.code(expr).strip()))
    new_methods = {}
    for method in others:
        body = list(method.body.body)
        first = 1 if body and _cst.is_docstring(body[0]) else 0
        body.insert(first, opener)
        new_methods[method] = method.with_changes(body=method.body.with_changes(body=body))
    new_init = init.deep_replace(assign, assign.with_changes(value=cst.Name("None")))
    new_body = []
    for stmt in cls.body.body:
        if stmt is init:
            new_body.extend([new_init, getstate])
        else:
            new_body.append(new_methods.get(stmt, stmt))
    new_cls = cls.with_changes(body=cls.body.with_changes(body=new_body))
    return tree.module.deep_replace(cls, new_cls).code


def _insert_after_init(cls, init, method):
    body = []
    for stmt in cls.body.body:
        body.append(stmt)
        if stmt is init:
            body.append(method)
    return cls.with_changes(body=cls.body.with_changes(body=body))


def _rebuildable(expr, init):
    """``expr`` with __init__ parameters read through the attributes __init__ stores them
    in, or None when it reads a local that is not kept on ``self``."""
    params = {p.name.value for p in init.params.params} - {"self"}
    stored = {}
    for stmt in init.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and isinstance(small.value, cst.Name) \
                        and isinstance(small.targets[0].target, cst.Attribute) \
                        and _cst.dotted(small.targets[0].target.value) == "self":
                    stored.setdefault(small.value.value, small.targets[0].target.attr.value)
    local = _cst.bound_in_function(init) - {"self"}
    needed = _cst.free_names(expr) & local
    if needed - set(stored) or needed - params:
        return None

    class Swap(cst.CSTTransformer):
        def visit_Attribute(self, node):
            return False

        def leave_Attribute(self, original, updated):
            return updated.with_changes(value=updated.value.visit(self))

        def leave_Name(self, original, updated):
            if original.value in needed:
                return cst.parse_expression("self.%s" % stored[original.value])
            return updated
    return expr.visit(Swap())


# Fixit-style: each INVALID example with the fixed code this maker must produce.
INVALID = (
    ('''\
from torch.utils.data import DataLoader, Dataset


class Lines(Dataset):
    def __init__(self, path):
        self.file = open(path)  # the whole file, read once
        self.lines = self.file.read().splitlines()

    def __len__(self):
        return len(self.lines)

    def __getitem__(self, i):
        return self.lines[i]


if __name__ == "__main__":
    print(list(DataLoader(Lines(__file__), num_workers=2)))
''', '''\
from torch.utils.data import DataLoader, Dataset


class Lines(Dataset):
    def __init__(self, path):
        self.file = open(path)  # the whole file, read once
        self.lines = self.file.read().splitlines()

    def __getstate__(self):
        state = self.__dict__.copy()
        state['file'] = None  # DLW108: each worker opens its own
        return state

    def __len__(self):
        return len(self.lines)

    def __getitem__(self, i):
        return self.lines[i]


if __name__ == "__main__":
    print(list(DataLoader(Lines(__file__), num_workers=2)))
'''),
    ('''\
import sqlite3

from torch.utils.data import DataLoader, Dataset


class Rows(Dataset):
    def __init__(self, path):
        self.path = path
        self.db = sqlite3.connect(path)

    def __len__(self):
        return 8

    def __getitem__(self, i):
        """One row."""
        return self.db.execute("select x from t where id = ?", (i,)).fetchone()[0]


if __name__ == "__main__":
    print(list(DataLoader(Rows("rows.db"), num_workers=2)))
''', '''\
import sqlite3

from torch.utils.data import DataLoader, Dataset


class Rows(Dataset):
    def __init__(self, path):
        self.path = path
        self.db = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state['db'] = None  # DLW108: each worker opens its own
        return state

    def __len__(self):
        return 8

    def __getitem__(self, i):
        """One row."""
        if self.db is None:
            self.db = sqlite3.connect(self.path)
        return self.db.execute("select x from t where id = ?", (i,)).fetchone()[0]


if __name__ == "__main__":
    print(list(DataLoader(Rows("rows.db"), num_workers=2)))
'''),
)
