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
  module names, ``self`` attributes, and ``__init__`` parameters; a parameter that
  ``__init__`` does not keep (``open(path)``) is kept as ``self.path`` first, unless the
  class already uses that attribute for something else.
- A handle that ``__init__`` reads, or that other objects are taken from there
  (``self.tokens = self.h5["tokens"]``, an h5py dataset, as unpicklable as the file), is
  reopened when a worker unpickles the dataset: ``__getstate__`` drops the handle and
  everything taken from it, ``__setstate__`` opens it again and takes them again.

- A handle kept only in a local of ``__init__``, with something taken from it kept on
  the dataset (``db = sqlite3.connect(...)``, ``self.rows = db.cursor()``), is first kept
  itself (``self.db``), then handled as above.
- A sqlite connection that ``__init__`` keeps using (a database it fills, an in-memory
  one) travels as its bytes: ``__getstate__`` keeps ``serialize()``, ``__setstate__``
  gives each worker an in-memory copy (Python 3.11+). Another handle that ``__init__``
  opened for writing gets no patch: the fix stays in words.
"""
import re

import libcst as cst

from doctor.patches import _cst

CODE = "DLW108"
STATIC = True
#: the attribute's name is the last part of the path the message names
#: (``self.reader.archive``: a handle on an object the dataset keeps)
_TEXT = re.compile(r"dataset attribute 'self\.(?:\w+\.)*(\w+)'")
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


def fix(source, finding, facts, params_stored=False, local_kept=False):
    match = _TEXT.search(finding.text)
    tree = _cst.Tree(source)
    value = tree.first_at(finding.line, finding.col)
    if not match or value is None:
        return None
    attr = match.group(1)
    assign = next((a for a in tree.ancestors(value) if isinstance(a, cst.Assign)), None)
    init = next((a for a in tree.ancestors(value) if isinstance(a, cst.FunctionDef)), None)
    cls = next((a for a in tree.ancestors(value) if isinstance(a, cst.ClassDef)), None)
    if cls is None and not params_stored:
        # DS(sqlite3.connect(p)): reported at the argument; the class keeps the parameter
        moved = _kept_parameter(tree, value, attr)
        return fix(source, finding._replace(line=moved[0], col=moved[1]), facts, True,
                   local_kept) if moved is not None else None
    if assign is not None and init is not None and cls is not None \
            and init.name.value != "__init__" and len(assign.targets) == 1 \
            and _self_attr(assign.targets[0].target, attr):
        return _fix_helper(source, tree, cls, init, assign, attr, finding, facts,
                           params_stored)
    if assign is None or init is None or cls is None or init.name.value != "__init__" \
            or len(assign.targets) != 1 or not _self_attr(assign.targets[0].target, attr):
        return None
    if isinstance(assign.value, cst.Name) and \
            assign.value.value in {p.name.value for p in init.params.params}:
        return _fix_given(tree, cls, init, attr, finding.text)
    taken_from = _root_attr(assign.value)
    if taken_from is not None:  # self.tokens = self.h5["tokens"]: the file is the handle
        fixed = _fix_handle(tree, cls, init, taken_from, {attr})
        handle = _assignments(init, taken_from)
        if fixed is None and not params_stored and len(handle) == 1:
            # the file is opened from a parameter __init__ does not keep: keep it too
            return _with_params_stored(source, tree, cls, init, handle[0], finding, facts,
                                       local_kept)
        return fixed
    local = _root_local(assign.value)
    if local is not None and not local_kept:
        # db = sqlite3.connect(...); self.rows = db.cursor(): keep the handle itself as
        # self.db, so that it can travel (or be reopened) with what was taken from it
        kept = _keep_local(tree, cls, init, local)
        return fix(kept, finding, facts, params_stored, True) if kept is not None else None
    helper_db = _helper_connection(tree, finding.text, assign.value)
    if helper_db is not None and any(u is not assign.targets[0].target
                                     for u in _uses(init, attr)):
        # self.db = connect(path), a helper wrapping sqlite3's, read by __init__ itself:
        # a reopened connection would not hold what __init__ saw or did
        return _copy_database(tree, cls, init, attr, helper_db, _derived(init, attr, set()))
    fixed = _fix_handle(tree, cls, init, attr, set())
    if fixed is None and not params_stored:
        # open(path) with a parameter __init__ does not keep: keep it, then open lazily
        return _with_params_stored(source, tree, cls, init, assign, finding, facts, local_kept)
    return fixed


def _fix_helper(source, tree, cls, helper, assign, attr, finding, facts, params_stored):
    """The handle is opened by a method that ``__init__`` calls on ``self``
    (``self._open(data)``), on an object the dataset keeps or the dataset itself:
    ``__getstate__`` drops it and, where other methods use it, ``__setstate__`` calls the
    method again with what ``__init__`` gave it (a parameter is kept on ``self`` first);
    a sqlite connection travels as its bytes instead, a file opened for writing gets no
    patch."""
    methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)]
    init = next((m for m in methods if m.name.value == "__init__"), None)
    if init is None or not any(m is helper for m in methods) \
            or len(_assignments(helper, attr)) != 1:
        return None
    calls = [e for e in _called_on_self(init) if _self_attr(e.value.func, helper.name.value)]
    if len(calls) != 1 or any(
            m.name.value in ("__getstate__", "__setstate__", "__reduce__", "__reduce_ex__")
            and not _ours(m) for m in methods):
        return None
    getstate = _getstate([attr])
    if not any(_uses(m, attr) for m in methods if m is not init and m is not helper):
        return tree.module.deep_replace(cls, _insert_after_init(cls, init, [getstate])).code
    opener = _cst.dotted(getattr(assign.value, "func", None)) or ""
    if opener.split(".")[-1] == "connect" and "sqlite3" in opener + "".join(
            _imports_of(tree.module, "sqlite3")):
        return _copy_database(tree, cls, init, attr, opener, [])
    if not _reopenable(assign.value):
        return None
    call = calls[0].value
    args = [_rebuildable(arg.value, init) for arg in call.args]
    if any(arg is None for arg in args):
        stored = None if params_stored else _store_params(source, tree, cls, init, calls[0])
        if stored is None:
            return None
        source, added = stored
        below = tree.pos[helper].start.line > tree.pos[calls[0]].start.line
        return fix(source, finding._replace(line=finding.line + (added if below else 0)),
                   facts, True)
    again = call.with_changes(args=[a.with_changes(value=v) for a, v in zip(call.args, args)])
    setstate = cst.parse_statement(
        "def __setstate__(self, state):\n    self.__dict__.update(state)\n"
        "    %s  # DLW108: reopened in each worker\n" % _cst.code(again).strip()
    ).with_changes(leading_lines=[cst.EmptyLine(indent=False)])
    new_cls = _insert_after_init(cls, init, [getstate, setstate])
    return tree.module.deep_replace(cls, new_cls).code


def _called_on_self(init):
    """The statements of ``__init__`` that are one call of a method on ``self``."""
    found = []

    class Find(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            return node is init

        def visit_Lambda(self, node):
            return False

        def visit_Expr(self, node):
            if isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Attribute) \
                    and _cst.dotted(node.value.func.value) == "self":
                found.append(node)
    init.visit(Find())
    return found


def _with_params_stored(source, tree, cls, init, assign, finding, facts, local_kept):
    """The fix again, once the parameters the handle's opener reads are kept on self
    (their lines go above the opener, which lies above the finding); None without any."""
    stored = _store_params(source, tree, cls, init, assign)
    if stored is None:
        return None
    source, added = stored
    return fix(source, finding._replace(line=finding.line + added), facts, True, local_kept)


def _fix_given(tree, cls, init, attr, text):
    """The caller opened the handle and passed it in, so the worker cannot reopen it:
    a sqlite database travels as its bytes; any other handle gets no patch."""
    opener = "sqlite3.connect" if _cst.has_plain_import(tree.module, "sqlite3") else (
        "connect" if "connect" in _imports_of(tree.module, "sqlite3") else None)
    if "a sqlite3 connection" not in text or opener is None:
        return None
    return _copy_database(tree, cls, init, attr, opener, _derived(init, attr, set()))


def _kept_parameter(tree, argument, attr):
    """(line, col) of ``param`` in ``self.<attr> = param`` in the ``__init__`` of the
    class of this module whose constructor call ``argument`` is given to, or None."""
    call = next((a for a in tree.ancestors(argument) if isinstance(a, cst.Call)), None)
    if call is None or not isinstance(call.func, cst.Name):
        return None
    cls = next((s for s in tree.module.body if isinstance(s, cst.ClassDef)
                and s.name.value == call.func.value), None)
    init = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef)
                 and s.name.value == "__init__"), None) if cls is not None else None
    if init is None:
        return None
    params = {p.name.value for p in init.params.params}
    for assign in tree.nodes(cst.Assign):
        if init in tree.ancestors(assign) and len(assign.targets) == 1 \
                and _self_attr(assign.targets[0].target, attr) \
                and isinstance(assign.value, cst.Name) and assign.value.value in params:
            where = tree.pos[assign.value].start
            return where.line, where.column
    return None


def _used(expr):
    """``x`` of ``x["k"]``, ``x.k`` or ``x.cursor()`` (a handle's method), else None."""
    if isinstance(expr, (cst.Subscript, cst.Attribute)):
        return expr.value
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value in _HANDLE_METHODS:
        return expr.func.value
    return None


def _root_local(expr):
    """``db`` for ``db.cursor()``, ``db["x"]`` or ``db.x`` where ``db`` is a plain name."""
    inner = _used(expr)
    return inner.value if isinstance(inner, cst.Name) else None


def _keep_local(tree, cls, init, local):
    """The module with the local ``local`` of ``__init__`` made ``self.local`` there, or
    None: it must be bound once, by a call, not be a parameter, not be read by a nested
    function, and ``self.local`` must not already mean something in the class."""
    params = {p.name.value for p in init.params.params}
    binds = [a for a in _local_assignments(init) if a == local]
    if local in params or len(binds) != 1 or \
            re.search(r"\bself\.%s\b" % re.escape(local), _cst.code(cls)):
        return None
    nested = [n for n in _cst.Tree(_cst.code(init)).nodes(cst.FunctionDef)][1:] + \
        [n for n in _cst.Tree(_cst.code(init)).nodes(cst.Lambda)]
    if any(local in _cst.names(n)[0] for n in nested):
        return None

    class ToAttribute(cst.CSTTransformer):
        def leave_Name(self, original, updated):
            if original.value == local:
                return cst.Attribute(value=cst.Name("self"), attr=cst.Name(local))
            return updated

        def visit_Attribute(self, node):  # x.db is not the local db: only its value is
            return False

        def leave_Attribute(self, original, updated):
            return updated.with_changes(value=updated.value.visit(self))

        def visit_Arg(self, node):  # f(db=...) names a keyword, not the local
            return True

        def leave_Arg(self, original, updated):
            return updated.with_changes(keyword=original.keyword)

    new_init = init.with_changes(body=init.body.visit(ToAttribute()))
    return tree.module.deep_replace(init, new_init).code


def _local_assignments(init):
    """The plain names that ``__init__``'s own statements assign, once per assignment."""
    found = []

    class Find(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            return node is init

        def visit_Lambda(self, node):
            return False

        def visit_AssignTarget(self, node):
            if isinstance(node.target, cst.Name):
                found.append(node.target.value)
    init.visit(Find())
    return found


def _store_params(source, tree, cls, init, assign):
    """``source`` with ``self.p = p`` added before the handle's line for each parameter
    of ``__init__`` that its opening expression reads and ``__init__`` does not keep, and
    the number of lines added; None when there is none, or a ``self.p`` already means
    something else."""
    params = [p.name.value for p in init.params.params if p.name.value != "self"]
    needed = _cst.free_names(assign.value) & (_cst.bound_in_function(init) - {"self"})
    missing = [p for p in params if p in needed and p not in _stored_params(init)]
    statement = tree.parents[assign]
    if not missing or set(needed) - set(params) - set(_stored_params(init)) \
            or not isinstance(statement, cst.SimpleStatementLine):
        return None
    class_code = _cst.code(cls)
    if any(re.search(r"\bself\.%s\b" % re.escape(p), class_code) for p in missing):
        return None
    first = tree.line(statement)
    lines = source.splitlines(True)
    indent = lines[first - 1][:len(lines[first - 1]) - len(lines[first - 1].lstrip())]
    lines[first - 1:first - 1] = ["%sself.%s = %s\n" % (indent, p, p) for p in missing]
    return "".join(lines), len(missing)


def _stored_params(init):
    """{parameter: the attribute} for each ``self.attr = parameter`` in ``__init__``."""
    stored = {}
    for stmt in init.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and isinstance(small.value, cst.Name) \
                        and isinstance(small.targets[0].target, cst.Attribute) \
                        and _cst.dotted(small.targets[0].target.value) == "self":
                    stored.setdefault(small.value.value, small.targets[0].target.attr.value)
    return stored


def _fix_handle(tree, cls, init, attr, derived_named):
    assigns = _assignments(init, attr)
    if len(assigns) != 1:
        return None
    assign = assigns[0]
    methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)]
    if any(m.name.value in ("__getstate__", "__setstate__", "__reduce__", "__reduce_ex__")
           and not _ours(m) for m in methods):
        return None  # the class pickles itself its own way
    derived = _derived(init, attr, derived_named)
    dropped = [attr] + [d for d, _ in derived]
    others = [m for m in methods if m is not init and any(_uses(m, a) for a in dropped)]
    line_stmt = tree.parents[assign]
    in_derived = {id(u) for _, d in derived for u in _uses(d, attr)}
    init_uses = [u for u in _uses(init, attr)
                 if u is not assign.targets[0].target and id(u) not in in_derived]
    getstate = _getstate(dropped)
    if not others:
        new_cls = _insert_after_init(cls, init, [getstate])
        return tree.module.deep_replace(cls, new_cls).code
    if not isinstance(line_stmt, cst.SimpleStatementLine) or len(line_stmt.body) != 1:
        return None
    expr = _rebuildable(assign.value, init)
    if expr is None:
        return None
    if (_cst.dotted(getattr(expr, "func", None)) or "").split(".")[-1] in _SYNC:
        # a lock made on first use could be made twice by two threads: make it when
        # the worker unpickles the dataset instead
        return _reopen_on_unpickle(tree, cls, init, getstate, [(attr, expr)])
    if derived or init_uses:
        # __init__ reads the handle, or keeps objects taken from it: the worker
        # reopens it, and takes them again, when it unpickles the dataset
        opener = _cst.dotted(getattr(expr, "func", None)) or ""
        if init_uses and opener.split(".")[-1] == "connect" and "sqlite3" in opener + "".join(
                _imports_of(tree.module, "sqlite3")):
            return _copy_database(tree, cls, init, attr, opener, derived)
        if init_uses and not _reopenable(expr):
            return None
        rebuilt = [(attr, expr)]
        for name, value in derived:
            again = _rebuildable(value, init)
            if again is None:
                return None
            rebuilt.append((name, again))
        return _reopen_on_unpickle(tree, cls, init, getstate, rebuilt)
    opener = cst.parse_statement("if self.%s is None:\n    self.%s = %s\n" % (
        attr, attr, _cst.code(expr).strip()))
    new_methods = {}
    for method in others:
        body = list(method.body.body)
        first = 1 if body and _cst.is_docstring(body[0]) else 0
        body.insert(first, opener)
        new_methods[method] = method.with_changes(body=method.body.with_changes(body=body))
    new_init = init.deep_replace(assign, assign.with_changes(value=cst.Name("None")))
    new_body = [new_init if stmt is init else new_methods.get(stmt, stmt)
                for stmt in cls.body.body]
    new_cls = cls.with_changes(body=cls.body.with_changes(body=new_body))
    new_cls = _insert_after_init(new_cls, new_init, [getstate])
    return tree.module.deep_replace(cls, new_cls).code


def _getstate(dropped):
    lines = ["def __getstate__(self):", "    state = self.__dict__.copy()"]
    lines += ["    state[%r] = None  # DLW108: each worker opens its own" % dropped[0]]
    lines += ["    state[%r] = None  # taken from self.%s" % (d, dropped[0]) for d in dropped[1:]]
    lines += ["    return state"]
    return cst.parse_statement("\n".join(lines) + "\n").with_changes(
        leading_lines=[cst.EmptyLine(indent=False)])


def _reopen_on_unpickle(tree, cls, init, getstate, rebuilt):
    lines = ["def __setstate__(self, state):", "    self.__dict__.update(state)"]
    lines += ["    self.%s = %s" % (name, _cst.code(expr).strip()) for name, expr in rebuilt]
    setstate = cst.parse_statement("\n".join(lines) + "\n").with_changes(
        leading_lines=[cst.EmptyLine(indent=False)])
    new_cls = _insert_after_init(cls, init, [getstate, setstate])
    return tree.module.deep_replace(cls, new_cls).code


def _imports_of(module, name):
    """The names ``from NAME import ...`` binds in ``module``."""
    found = []
    for stmt in module.body:
        if _cst.is_import(stmt):
            for small in stmt.body:
                if isinstance(small, cst.ImportFrom) and _cst.dotted(small.module) == name \
                        and not isinstance(small.names, cst.ImportStar):
                    found += [a.name.value for a in small.names]
    return found


def _helper_connection(tree, text, value):
    """``sqlite3.connect`` (as the module names it) when the checker found a sqlite3
    connection made by a helper of the project (``connect(path)`` returning
    ``sqlite3.connect(path)``): its database travels as its bytes, as sqlite3's own
    does; None for anything else."""
    opener = _cst.dotted(getattr(value, "func", None)) or ""
    if "a sqlite3 connection" not in text or not opener or "sqlite3" in opener \
            or opener in _imports_of(tree.module, "sqlite3"):
        return None  # not one, or sqlite3's own connect: the paths above
    if _cst.has_plain_import(tree.module, "sqlite3"):
        return "sqlite3.connect"
    return "connect" if "connect" in _imports_of(tree.module, "sqlite3") else None


def _copy_database(tree, cls, init, attr, opener, derived):
    """A sqlite database that __init__ filled travels as its bytes (``serialize``) and
    every worker opens its own in-memory copy of it."""
    dropped = [d for d, _ in derived]
    lines = ["def __getstate__(self):", "    state = self.__dict__.copy()",
             "    state[%r] = self.%s.serialize()  # DLW108: the database, as bytes"
             % (attr, attr)]
    lines += ["    state[%r] = None  # taken from self.%s" % (d, attr) for d in dropped]
    lines += ["    return state"]
    getstate = cst.parse_statement("\n".join(lines) + "\n").with_changes(
        leading_lines=[cst.EmptyLine(indent=False)])
    lines = ["def __setstate__(self, state):", "    self.__dict__.update(state)",
             '    self.%s = %s(":memory:")  # each worker its own copy' % (attr, opener),
             "    self.%s.deserialize(state[%r])" % (attr, attr)]
    lines += ["    self.%s = %s" % (d, _cst.code(value).strip()) for d, value in derived]
    setstate = cst.parse_statement("\n".join(lines) + "\n").with_changes(
        leading_lines=[cst.EmptyLine(indent=False)])
    new_cls = _insert_after_init(cls, init, [getstate, setstate])
    return tree.module.deep_replace(cls, new_cls).code


#: methods of a handle that give another handle on the same open file or connection
_HANDLE_METHODS = ("cursor", "get", "open", "require_dataset", "require_group", "begin")
#: openers whose handle holds what __init__ put into it: reopening would lose it
_STATEFUL = ("sqlite3.connect", "connect")


def _root_attr(expr):
    """``h5`` for ``self.h5["x"]``, ``self.h5.x`` or ``self.db.cursor()``, else None."""
    inner = _used(expr)
    if isinstance(inner, cst.Attribute) and isinstance(inner.value, cst.Name) \
            and inner.value.value == "self":
        return inner.attr.value
    return None


def _assignments(init, attr):
    found = []

    class Find(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            return node is init

        def visit_Assign(self, node):
            if len(node.targets) == 1 and _self_attr(node.targets[0].target, attr):
                found.append(node)
    init.visit(Find())
    return found


def _derived(init, attr, named):
    """(name, value) of the attributes __init__ takes from the handle as objects of the
    same kind (``self.tokens = self.h5["tokens"]``), plus those in ``named``."""
    found = []
    for stmt in init.body.body:
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            continue
        small = stmt.body[0]
        if not isinstance(small, cst.Assign) or len(small.targets) != 1:
            continue
        target = small.targets[0].target
        if not (isinstance(target, cst.Attribute) and _cst.dotted(target.value) == "self"):
            continue
        name = target.attr.value
        if name != attr and (_root_attr(small.value) == attr or (
                name in named and _uses(small.value, attr))):
            found.append((name, small.value))
    return found


def _reopenable(expr):
    """An opener that gives the same contents again: not a connection (its database may
    be in memory or filled by __init__), not a file opened for writing."""
    if not isinstance(expr, cst.Call):
        return False
    if (_cst.dotted(expr.func) or "").split(".")[-1] in _STATEFUL:
        return False
    for arg in expr.args:
        if isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value in (
                "w", "a", "x", "r+", "w+", "a+", "wb", "ab", "r+b", "w-"):
            return False
    return True


def _insert_after_init(cls, init, methods):
    """``methods`` after ``__init__``; where an earlier fix of another handle already
    wrote ``__getstate__`` or ``__setstate__``, their lines join that method."""
    written = {s.name.value: s for s in cls.body.body
               if isinstance(s, cst.FunctionDef) and _ours(s)}
    joined = {}
    for method in methods:
        old = written.get(method.name.value)
        if old is not None:
            joined[old] = _join(old, method)
    anchor = init  # new methods go after __init__ and the ones written before
    for stmt in cls.body.body:
        if any(stmt is m for m in written.values()):
            anchor = stmt
    body = []
    for stmt in cls.body.body:
        body.append(joined.get(stmt, stmt))
        if stmt is anchor:
            body.extend(m for m in methods if m.name.value not in written)
    return cls.with_changes(body=cls.body.with_changes(body=body))


def _ours(method):
    """A ``__getstate__`` or ``__setstate__`` in the shape this maker writes."""
    body = method.body.body
    first = _cst.code(body[0]).strip() if body else ""
    if method.name.value == "__getstate__":
        return (first == "state = self.__dict__.copy()"
                and _cst.code(body[-1]).strip() == "return state")
    return method.name.value == "__setstate__" and first == "self.__dict__.update(state)"


def _join(old, new):
    """The lines of ``new`` (one of ours) added to ``old`` (one of ours too)."""
    body, lines = list(old.body.body), list(new.body.body)
    if old.name.value == "__getstate__":
        body[-1:-1] = lines[1:-1]
    else:  # a method called again once is enough for every handle it opens
        written = {_cst.code(stmt).strip() for stmt in body}
        body += [line for line in lines[1:] if _cst.code(line).strip() not in written]
    return old.with_changes(body=old.body.with_changes(body=body))


def _rebuildable(expr, init):
    """``expr`` with __init__ parameters read through the attributes __init__ stores them
    in, or None when it reads a local that is not kept on ``self``."""
    params = {p.name.value for p in init.params.params} - {"self"}
    stored = _stored_params(init)
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
