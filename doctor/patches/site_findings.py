"""A site the run named, found in the file as it is now (libcst): the finding a maker
takes, as the static checker would give it, so one maker serves both. Imported by the
fix stage only when it has a site to fix, so a passing run never loads libcst."""
import libcst as cst

from doctor.patches import _cst
from doctor.patches.sites import pickle_kind
from flake8_dlworker.rules import Finding


def as_finding(site, source, line=None):
    """The finding a maker takes for ``site`` in ``source``; ``line`` is the site's line
    after earlier edits of the same file. None when the site is not there (any more)."""
    try:
        tree = _cst.Tree(source)
    except cst.ParserSyntaxError:
        return None
    line = line or site.line
    if site.kind == "lambda":
        return _lambda_finding(tree, site, line)
    if site.kind in ("function", "class"):
        return _definition_finding(tree, site, line)
    if site.kind == "handle":
        return _handle_finding(tree, site, line)
    if site.kind == "iterable":
        return _iterable_finding(tree, site, line)
    return None


def _iterable_finding(tree, site, line):
    """The class ``site.name`` whose body holds ``line`` (its ``__iter__``)."""
    classes = [n for n in tree.nodes(cst.ClassDef) if n.name.value == site.name
               and (not line or tree.pos[n].start.line <= line <= tree.pos[n].end.line)]
    if len(classes) != 1:
        return None
    where = tree.pos[classes[0]].start
    return Finding(where.line, where.column, site.code, "IterableDataset '%s'" % site.name)


def _lambda_finding(tree, site, line):
    lambdas = tree.nodes(cst.Lambda)
    if line:
        lambdas = [n for n in lambdas if tree.pos[n].start.line == line]
        if len(lambdas) > 1 and site.col is not None and line == site.line:
            lambdas = [n for n in lambdas if _spans(tree, n, line, site.col)]
            lambdas = lambdas[-1:]  # the innermost of nested lambdas
    elif site.name:  # 'main.<locals>.<lambda>': a lambda inside main
        scope = site.name.split(".<locals>.")[0].split(".")[-1]
        lambdas = [n for n in lambdas if any(
            f.name.value == scope for f in tree.functions_around(n))]
    if len(lambdas) != 1:
        return None
    where = tree.pos[lambdas[0]].start
    return Finding(where.line, where.column, site.code, "lambda")


def _spans(tree, node, line, col):
    where = tree.pos[node]
    end = where.end.column if where.end.line == line else float("inf")
    return where.start.column <= col < end


def _definition_finding(tree, site, line):
    parts = site.name.split(".")
    name = parts[-1]
    if pickle_kind(site.code) == "local":
        if ".<locals>." not in site.name:
            return None
        before = site.name.rsplit(".<locals>.", 1)
        inner = before[1].split(".")
        scope = before[0].split(".")[-1]
        name = inner[0]
        kind = "class" if site.kind == "class" or len(inner) > 1 else "function"
        text = "%s '%s' defined inside %s()" % (kind, name, scope)
    else:
        text = "%s '%s' defined inside the __main__ guard" % (site.kind, name)
    found = [n for n in tree.nodes((cst.FunctionDef, cst.ClassDef)) if n.name.value == name]
    if line:
        near = [n for n in found
                if tree.pos[n].start.line <= line <= tree.pos[n].end.line]
        found = near or found
    if not found:
        return None
    where = tree.pos[found[0]].start
    return Finding(where.line, where.column, site.code, text)


def _handle_finding(tree, site, line):
    """``self.ATTR = VALUE`` in ``__init__`` of the class at ``line``: the value."""
    classes = [n for n in tree.nodes(cst.ClassDef)
               if not line or tree.pos[n].start.line <= line <= tree.pos[n].end.line]
    for cls in sorted(classes, key=lambda n: -tree.pos[n].start.line):
        for init in cls.body.body:
            if not (isinstance(init, cst.FunctionDef) and init.name.value == "__init__"):
                continue
            for assign in _self_assignments(init, site.name):
                where = tree.pos[assign.value].start
                return Finding(where.line, where.column, site.code,
                               "dataset attribute 'self.%s'" % site.name)
    return None


def _self_assignments(init, attr):
    found = []

    class Find(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            return node is init

        def visit_Assign(self, node):
            target = node.targets[0].target if len(node.targets) == 1 else None
            if isinstance(target, cst.Attribute) and _cst.dotted(target) == "self." + attr:
                found.append(node)
    init.visit(Find())
    return found
