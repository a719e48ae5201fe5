"""Where the object a pickling error names is defined, when its file can be read here.

``Can't get attribute 'FaceDataset' on <module '__mp_main__' from '/p/train.py'>`` names
a class; ``Can't pickle local object 'make_loader.<locals>.<lambda>'`` a lambda inside a
function.  The files looked in are the ones the log names (the script of
``__mp_main__``, the user's frames), read through :mod:`doctor.sourcefile` only.
"""
import ast
import re

from doctor.sourcefile import read_source

_ATTRIBUTE = re.compile(r"Can't get attribute '(?P<name>[\w.]+)' on <module '[^']+'"
                        r"(?: from '(?P<file>[^']+)')?>|"
                        r"module '__(?:mp_)?main__' has no attribute '(?P<name2>\w+)'")
_LOCAL = re.compile(r"local object '(?P<qual>[^']+)'|"
                    r"local object <(?:function|class) (?P<qual2>\S+) at ")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def find_definition(text, files, roots):
    """(path, line) of the definition ``text`` names, or None."""
    attribute = _ATTRIBUTE.search(text)
    local = _LOCAL.search(text)
    if attribute:
        parts = (attribute["name"] or attribute["name2"]).split(".")
        anywhere = True   # defined under ``if __name__ == "__main__":`` or in a function
        if attribute["file"]:
            files = [attribute["file"]] + [f for f in files if f != attribute["file"]]
    elif local:
        parts = [p for p in (local["qual"] or local["qual2"]).split(".") if p != "<locals>"]
        anywhere = False
    else:
        return None
    for path in files:
        source = read_source(path, roots)[0]
        if source is None:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        line = _resolve(tree, parts, anywhere)
        if line:
            return path, line
    return None


def _resolve(tree, parts, anywhere):
    scope = tree
    for part in parts:
        nodes = ast.walk(scope) if anywhere and scope is tree else _in_scope(scope)
        scope = next((n for n in nodes if _defines(n, part)), None)
        if scope is None:
            return None
    return scope.lineno


def _in_scope(node):
    """The nodes of ``node``'s own scope, not those of the functions and classes in it."""
    queue = list(ast.iter_child_nodes(node))
    while queue:
        child = queue.pop(0)
        yield child
        if not isinstance(child, _SCOPES):
            queue.extend(ast.iter_child_nodes(child))


def _defines(node, name):
    if name == "<lambda>":
        return isinstance(node, ast.Lambda)
    if isinstance(node, _SCOPES[:3]):
        return node.name == name
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    return False
