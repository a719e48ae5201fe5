"""Where the run says the culprit was defined: the patch makers' input from evidence.

The pickle probe names the object a worker could not receive, its attribute path and
its definition site (a lambda's or a nested function's first line, the class of the
object that keeps a handle); a worker's pickling error names a qualified name. Each
becomes a :class:`Site`, and :func:`as_finding` turns a site into the same finding a
maker gets from the static checker (line, column, message), located in the file as it
is now, so one maker serves both.

A site lies in a file of the user's project: under the working directory, not in an
installed package.
"""
import os
import re
from typing import NamedTuple, Optional

import libcst as cst

from doctor.patches import _cst
from flake8_dlworker.catalog import RULES
from flake8_dlworker.rules import Finding

_QUALNAME = re.compile(r"^(?:instance of )?(function|class) '([\w.<>]+)'")
_ATTR = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\.([A-Za-z_]\w*)$")
_TEXT_LOCAL = re.compile(r"Can't (?:pickle|get) local object '([\w.<>]+)'")
_TEXT_MAIN = re.compile(r"Can't get attribute '(\w+)' on <module '__(?:mp_)?main__'")


class Site(NamedTuple):
    code: str
    path: str                   # the file, absolute
    line: Optional[int]         # the definition's first line
    kind: str                   # lambda | function | class | handle
    name: Optional[str] = None  # qualified name of a function or class; a handle's attribute
    col: Optional[int] = None   # a lambda: a column inside it on ``line``


def in_project(path, cwd=None):
    """True for a file under the working directory that is not an installed package's."""
    from doctor.diagnose import is_library
    from doctor.patches.write import under_cwd

    return bool(path) and path.endswith(".py") and os.path.isfile(path) \
        and under_cwd(path, cwd) and not is_library(os.path.realpath(path))


def _kind(code):
    """What a worker cannot receive, for a pickling cause (its record's ``pickle_kind``:
    lambda, local, main, handle), else None."""
    rule = RULES.get(code)
    return rule.field("pickle_kind") if rule is not None else None


def from_probe(culprit, cwd=None):
    """The site of one pickle-probe culprit (the agent's ``probe`` event), or None."""
    code = culprit.get("code")
    kind = _kind(code)
    if kind in ("lambda", "local", "main"):
        path = culprit.get("file")
        if not path or not in_project(path, cwd):
            return None
        path = os.path.abspath(path)
        if kind == "lambda":
            return Site(code, path, culprit.get("line"), "lambda", col=culprit.get("col"))
        match = _QUALNAME.match(culprit.get("what", ""))
        if not match:
            return None
        return Site(code, path, culprit.get("line"), match.group(1), match.group(2))
    if kind == "handle":
        if culprit.get("assigned_line"):  # where the user's class keeps it (self.ATTR = ...)
            path = culprit.get("assigned_file")
            if not path or not in_project(path, cwd):
                return None
            return Site(code, os.path.abspath(path), culprit["assigned_line"], "handle",
                        culprit.get("attribute"))
        attr = _ATTR.match(culprit.get("path", ""))
        path = culprit.get("owner_file")
        if not attr or not path or not in_project(path, cwd):
            return None
        return Site(code, os.path.abspath(path), culprit.get("owner_line"), "handle",
                    attr.group(2))
    return None


def from_text(code, text, path, cwd=None):
    """The site a pickling error's text names in ``path`` (the script), or None."""
    if not path or not in_project(path, cwd):
        return None
    path = os.path.abspath(path)
    kind = _kind(code)
    local = _TEXT_LOCAL.search(text)
    if local and kind == "local":
        return Site(code, path, None, "function", local.group(1))
    if local and kind == "lambda":
        return Site(code, path, None, "lambda", local.group(1))
    main = _TEXT_MAIN.search(text)
    if main and kind == "main":
        return Site(code, path, None, "function", main.group(1))
    return None


def evidence_sites(ev, diagnoses, cwd=None):
    """Every site the run's evidence names, the probe's first."""
    found = []
    for culprit in getattr(ev, "probe", None) or ():
        site = from_probe(culprit, cwd)
        if site is not None and site not in found:
            found.append(site)
    if found or ev is None:
        return found
    for diag in diagnoses:
        for text in diag.evidence:
            site = from_text(diag.code, text, diag.path, cwd)
            if site is not None and site not in found:
                found.append(site)
    return found


# -- a site in the file as it is now -----------------------------------------------

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
    return None


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
    if _kind(site.code) == "local":
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
