"""DLW104: a definition that exists only inside the ``__main__`` guard reaches a worker
-> move it to module level, just above the guard.

A definition that reads names bound only inside the guard gets no patch (the workers
would not have them either), nor does a package's ``__main__.py`` run with
``python -m``: the definition belongs in another module of the package, a change
across files that is left to the user.
"""
import re

import libcst as cst

from doctor.patches import _cst, _hoist

CODE = "DLW104"
STATIC = True
_TEXT = re.compile(r"(function|class|method) '([\w.]+)' defined inside the __main__ guard")


def fix(source, finding, facts):
    match = _TEXT.search(finding.text)
    if not match:
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
