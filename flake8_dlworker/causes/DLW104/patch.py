"""DLW104: a definition that exists only inside the ``__main__`` guard reaches a worker
-> move it to module level, just above the guard.

A definition that reads names bound only inside the guard gets no patch (the workers
would not have them either).

A global that only the guard binds and that code run in the worker reads (``vocab =
...`` read by ``__getitem__``): its statement moves above the guard, with the guard's
statements before it that it needs (what they bind, the method calls that set up an
object it reads: ``parser.add_argument``), when each is a plain assignment, import or
such a call; anything else (a loop, a loader, a print) gets no patch.

A package's ``__main__.py`` run with ``python -m PKG`` is never imported by a spawned
worker: its definition moves to a new module of the package (``data.py``), with the
imports it reads, and ``__main__.py`` imports it from there. The maker needs the
file's path (``facts["path"]``) to name the package; a definition that reads other
names of ``__main__.py`` gets no patch.
"""
import os
import re

import libcst as cst

from doctor.patches import Rewrite, _cst, _hoist

CODE = "DLW104"
STATIC = True
_TEXT = re.compile(r"(function|class|method) '([\w.]+)' defined inside the __main__ guard")
_MAIN_FILE = re.compile(r"(function|class) '(\w+)' defined in __main__\.py")
_GLOBAL = re.compile(r"(global|module) '(\w+)' defined inside the __main__ guard reaches a "
                     r"worker as a name")
#: the new module's name, the first one the package does not have yet
_MODULES = ("data", "worker_data", "spawn_safe")


def fix(source, finding, facts):
    if _GLOBAL.search(finding.text):
        return _move_guarded_binding(source, finding.line)
    match = _TEXT.search(finding.text)
    if not match:
        match = _MAIN_FILE.search(finding.text)
        if match and facts.get("path"):
            return _move_out_of_main(source, match.group(2), facts["path"])
        return None
    name = match.group(2).split(".")[0]
    tree = _cst.Tree(source)
    module = tree.module
    for guard in module.body:
        if not _cst.is_main_guard(guard) or not _hoist.contains(tree, guard, finding.line):
            continue
        found = [s for s in guard.body.body
                 if isinstance(s, (cst.FunctionDef, cst.ClassDef)) and s.name.value == name]
        if len(found) != 1:
            return None
        definition = found[0]
        outside = set()
        for stmt in module.body:
            if stmt is not guard:
                outside |= _cst._bound_by(stmt)
        if name in outside:
            return None
        inside = set()
        for stmt in guard.body.body:
            if stmt is not definition:
                inside |= _cst._bound_by(stmt)
        if (_cst.free_names(definition) & inside) - outside:
            return None
        new = _hoist.hoist(module, guard, guard, definition)
        return None if new is None else new.code
    return None


def _package(path):
    """(the package folder, its dotted name) of a ``__main__.py``."""
    folder = os.path.dirname(os.path.abspath(path))
    parts, above = [], folder
    while True:
        parts.insert(0, os.path.basename(above))
        parent = os.path.dirname(above)
        if parent == above or not os.path.isfile(os.path.join(parent, "__init__.py")):
            break
        above = parent
    return folder, ".".join(parts)


def _imports_for(module, wanted):
    """The module's import statements cut down to the names in ``wanted``, in order, and
    the names they bind; None when a name in ``wanted`` is bound by anything else."""
    kept, bound = [], set()
    for stmt in module.body:
        names = _cst._bound_by(stmt) & wanted
        if not names:
            continue
        if not _cst.is_import(stmt) or len(stmt.body) != 1 or \
                isinstance(getattr(stmt.body[0], "names", None), cst.ImportStar):
            return None
        small = stmt.body[0]
        aliases = [a for a in small.names if _alias_name(a) in names]
        aliases[-1] = aliases[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        kept.append(stmt.with_changes(body=[small.with_changes(names=aliases)],
                                      leading_lines=[]))
        bound |= names
    return kept, bound


def _alias_name(alias):
    if alias.asname is not None:
        return alias.asname.name.value
    return (_cst.dotted(alias.name) or "").split(".")[0]


def _drop_unused_imports(module, names):
    """Remove from the module's imports those of ``names`` that it no longer reads."""
    read = set()
    for stmt in module.body:
        if not _cst.is_import(stmt):
            read |= _cst.names(stmt)[0]
    unused = set(names) - read
    body = []
    for stmt in module.body:
        if _cst.is_import(stmt) and len(stmt.body) == 1 and \
                not isinstance(getattr(stmt.body[0], "names", None), cst.ImportStar):
            small = stmt.body[0]
            aliases = [a for a in small.names if _alias_name(a) not in unused]
            if not aliases:
                continue
            if len(aliases) != len(small.names):
                aliases[-1] = aliases[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                stmt = stmt.with_changes(body=[small.with_changes(names=aliases)])
        body.append(stmt)
    return module.with_changes(body=body)


def _move_out_of_main(source, name, path):
    """__main__.py without the definition of ``name``, importing it from a new module
    of its package (a :class:`Rewrite` that carries the new file), or None."""
    folder, package = _package(path)
    target = next((os.path.join(folder, m + ".py") for m in _MODULES
                   if not os.path.exists(os.path.join(folder, m + ".py"))
                   and not os.path.exists(os.path.join(folder, m))), None)
    if target is None:
        return None
    module = _cst.Tree(source).module
    found = [s for s in module.body
             if isinstance(s, (cst.FunctionDef, cst.ClassDef)) and s.name.value == name]
    if len(found) != 1:
        return None
    definition = found[0]
    wanted = _cst.free_names(definition)
    imports = _imports_for(module, wanted)
    if imports is None:
        return None
    kept, bound = imports
    others = set()
    for stmt in module.body:
        if stmt is not definition:
            others |= _cst._bound_by(stmt)
    if (wanted - bound) & others:
        return None  # it reads something else __main__.py defines
    new_module = cst.Module(body=[
        cst.parse_statement('"""%s, moved out of __main__.py: spawned workers import it '
                            'from here."""\n' % name),
        *kept,
        _cst.at_module_level(definition),
    ])
    body = [s for s in module.body if s is not definition]
    main = _drop_unused_imports(module.with_changes(body=body), bound)
    mod = "%s.%s" % (package, os.path.splitext(os.path.basename(target))[0])
    main = _cst.add_import(main, "from %s import %s" % (mod, name), last=True)
    return Rewrite(main.code, {target: new_module.code})


def _move_guarded_binding(source, line):
    """The source with the guard's statement at ``line`` (and the guard's statements it
    needs) moved above the guard, or None."""
    tree = _cst.Tree(source)
    module = tree.module
    guard = next((g for g in module.body
                  if _cst.is_main_guard(g) and _hoist.contains(tree, g, line)), None)
    if guard is None:
        return None
    body = list(guard.body.body)
    first = next((s for s in body if _hoist.contains(tree, s, line)), None)
    outside = set()
    for stmt in module.body:
        if stmt is not guard:
            outside |= _cst._bound_by(stmt)
    if first is None or not _movable(first, set()):
        return None
    moving, bound = {id(first)}, set(_cst._bound_by(first))
    needed = _cst.free_names(first) - outside
    changed = True
    while changed:
        changed = False
        last = max(i for i, s in enumerate(body) if id(s) in moving)
        for stmt in body[:last]:
            if id(stmt) in moving:
                continue
            binds = _cst._bound_by(stmt)
            if not (binds & needed or _calls_on(stmt, bound)):
                continue
            if not _movable(stmt, bound):
                return None
            moving.add(id(stmt))
            bound |= binds
            needed |= _cst.free_names(stmt) - outside
            changed = True
    moved = [s for s in body if id(s) in moving]
    kept = [s for s in body if id(s) not in moving]
    if not kept:
        return None
    blank, comments = _cst.split_leading(kept[0].leading_lines)
    kept[0] = kept[0].with_changes(leading_lines=comments)
    new_guard = guard.with_changes(body=guard.body.with_changes(body=kept))
    top_blank, top_comments = _cst.split_leading(guard.leading_lines)
    moved[0] = moved[0].with_changes(leading_lines=list(top_blank) + list(
        _cst.split_leading(moved[0].leading_lines)[1]))
    new_guard = new_guard.with_changes(leading_lines=[_cst.EMPTY] * 2 + top_comments)
    out = []
    for stmt in module.body:
        out.extend(moved + [new_guard] if stmt is guard else [stmt])
    return module.with_changes(body=out).code


def _calls_on(stmt, bound):
    """Whether ``stmt`` is an expression statement calling a method of a name in
    ``bound`` (``parser.add_argument(...)``): it sets up that object."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            func = small.value.func
            while isinstance(func, cst.Attribute):
                func = func.value
            if isinstance(func, cst.Name) and func.value in bound \
                    and isinstance(small.value.func, cst.Attribute):
                return True
    return False


def _movable(stmt, bound):
    """A statement that may run at module level, in every worker too: plain assignments
    and imports, and method calls setting up an object being moved; never a loader."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    if "DataLoader" in _cst.code(stmt):
        return False
    for small in stmt.body:
        if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Import,
                              cst.ImportFrom)):
            continue
        if isinstance(small, cst.Expr) and _calls_on(stmt, bound):
            continue
        return False
    return True
