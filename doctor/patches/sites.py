"""Where the run says the culprit was defined: the patch makers' input from evidence.

The pickle probe names the object a worker could not receive, its attribute path and
its definition site (a lambda's or a nested function's first line, the class of the
object that keeps a handle); a worker's pickling error names a qualified name. Each
becomes a :class:`Site`; :mod:`doctor.patches.site_findings` finds a site in the file
as it is now.

A site lies in a file of the user's project: under the working directory, not in an
installed package.
"""
import os
import re
from typing import NamedTuple, Optional

from flake8_dlworker.catalog import RULES

_QUALNAME = re.compile(r"^(?:instance of )?(function|class) '([\w.<>]+)'")
_ATTR = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\.([A-Za-z_]\w*)$")
_TEXT_LOCAL = re.compile(r"Can't (?:pickle|get) local object '([\w.<>]+)'")
_TEXT_MAIN = re.compile(r"Can't get attribute '(\w+)' on <module '__(?:mp_)?main__'")
#: a run's words for an IterableDataset class whose workers each yielded the whole stream
_TEXT_ITERABLE = re.compile(r"IterableDataset '(\w+)' \(__iter__ at (.+?):(\d+)\)")


class Site(NamedTuple):
    code: str
    path: str                   # the file, absolute
    line: Optional[int]         # the definition's first line
    kind: str                   # lambda | function | class | handle | iterable
    name: Optional[str] = None  # qualified name of a function or class; a handle's attribute
    col: Optional[int] = None   # a lambda: a column inside it on ``line``


def in_project(path, cwd=None):
    """True for a file under the working directory that is not an installed package's."""
    from doctor.diagnose import is_library
    from doctor.patches.write import under_cwd

    return bool(path) and path.endswith(".py") and os.path.isfile(path) \
        and under_cwd(path, cwd) and not is_library(os.path.realpath(path))


def pickle_kind(code):
    """What a worker cannot receive, for a pickling cause (its record's ``pickle_kind``:
    lambda, local, main, handle), else None."""
    rule = RULES.get(code)
    return rule.field("pickle_kind") if rule is not None else None


def from_probe(culprit, cwd=None):
    """The site of one pickle-probe culprit (the agent's ``probe`` event), or None."""
    code = culprit.get("code")
    kind = pickle_kind(code)
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
    """The site a pickling error's text names in ``path`` (the script), or the
    IterableDataset class a diagnosis names with the place of its ``__iter__``; or None."""
    iterable = _TEXT_ITERABLE.search(text)
    if iterable and in_project(os.path.abspath(iterable.group(2)), cwd):
        return Site(code, os.path.abspath(iterable.group(2)), int(iterable.group(3)),
                    "iterable", iterable.group(1))
    if not path or not in_project(path, cwd):
        return None
    path = os.path.abspath(path)
    kind = pickle_kind(code)
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
