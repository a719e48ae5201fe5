"""One fix for a whole run: every maker's edit composed on each file in turn, one diff out.

The makers of one file run one after the other, each on the text the last one left,
so their edits never conflict: a lambda lifted out of a function that the unguarded-start
maker then moves under the guard is lifted first and moved with the rest. The sites the run
named are fixed first (their lines followed through the edits before them), then every
finding the static checker still has for the codes asked, then the runtime causes.
Each step is kept only when the file still compiles and the checker finds nothing in it
that it did not find before; a step that cannot be made is skipped, the others stay.
"""
import difflib
import os
from typing import List, NamedTuple, Optional

from doctor.patches import created_by, maker, new_problems, static_findings, unified_diff

#: at most this many findings of one code are fixed in one file
_ROUNDS = 20


class Request(NamedTuple):
    """Fix ``code`` in ``path`` (absolute): at ``line`` for a runtime cause, or every
    finding the checker has; ``site``, when the run named the definition."""
    code: str
    path: str
    line: Optional[int] = None
    facts: Optional[dict] = None
    site: Optional[object] = None


class FileFix:
    """One file's text before and after all its fixes, and what each step fixed;
    ``created``: a new file (``before`` is empty); ``creates``: the new files this
    file's fixes made (path -> text)."""

    def __init__(self, path, before, created=False):
        self.path, self.before, self.after = path, before, before
        self.created = created
        self.creates = {}
        self.steps = []  # "CODE at line 14 (from the run)"

    def diff(self, cwd=None):
        rel = os.path.relpath(self.path, cwd or os.getcwd()).replace(os.sep, "/")
        return unified_diff(rel, self.before, self.after, self.created) \
            if self.changed else None

    def take(self, new):
        """A maker's result becomes the file's text (and its new files are kept)."""
        self.after = new
        self.creates.update(created_by(new))

    @property
    def changed(self):
        return self.after != self.before


def map_line(old, new, line):
    """Where line ``line`` of ``old`` is in ``new``, or None when it was removed."""
    if not line:
        return None
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i1 <= line - 1 < i2:
            if tag == "equal":
                return j1 + line - i1
            return j1 + min(line - 1 - i1, j2 - j1 - 1) + 1 if j2 > j1 else None
    return None


def _compiles(text, path):
    try:
        compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _step(fix, text, path, start_method, *args):
    """A maker's step on ``text``, or None where it makes nothing, or a text that does
    not compile or in which the checker finds a problem it did not find before."""
    try:
        new = fix(text, *args)
    except Exception:  # a maker's failure is "no fix here", never the doctor's crash
        if os.environ.get("DLW_DOCTOR_DEBUG"):
            raise
        return None
    if new is None or new == text or not _compiles(new, path):
        return None
    if new_problems(text, new, path, start_method):
        return None
    return new


def _kept(text, fix_file, code, start_method, keep):
    """The findings of ``code`` in ``text`` that are to be fixed (``keep``: a
    ``(path, text, finding) -> bool`` that says which; None: all)."""
    found = static_findings(text, fix_file.path, code, start_method)
    return found if keep is None else [f for f in found if keep(fix_file.path, text, f)]


def _fix_static(code, fix_file, start_method, keep=None):
    """Every finding of ``code`` the checker has in the file's current text."""
    fixer = maker(code)
    for _ in range(_ROUNDS):
        found = _kept(fix_file.after, fix_file, code, start_method, keep)
        progress = False
        for finding in found:
            new = _step(fixer.fix, fix_file.after, fix_file.path, start_method, finding,
                        {"path": fix_file.path})
            if new is not None and len(_kept(new, fix_file, code, start_method,
                                             keep)) < len(found):
                fix_file.take(new)
                fix_file.steps.append("%s at line %d" % (code, finding.line))
                progress = True
                break
        if not progress:
            return


def _fix_site(request, fix_file, start_method):
    from doctor.patches.site_findings import as_finding  # libcst: only with a site to fix

    site = request.site
    line = map_line(fix_file.before, fix_file.after, site.line) if site.line else None
    finding = as_finding(site, fix_file.after, line)
    if finding is None:
        return
    new = _step(maker(request.code).fix, fix_file.after, fix_file.path, start_method,
                finding, dict(request.facts or {}, path=fix_file.path))
    if new is not None:
        fix_file.take(new)
        fix_file.steps.append("%s at line %d (the definition the run named)"
                              % (request.code, finding.line))


def _fix_runtime(request, fix_file, start_method):
    line = map_line(fix_file.before, fix_file.after, request.line)
    new = _step(maker(request.code).fix, fix_file.after, fix_file.path, start_method, line,
                request.facts or {})
    if new is not None:
        fix_file.take(new)
        fix_file.steps.append("%s at line %s" % (request.code, line))


def fix_file(path, before, requests, start_method="spawn", keep=None):
    """All ``requests`` for one file (``path`` absolute) composed on its text; ``keep``
    (see :func:`_kept`) leaves the static findings it rejects as they are."""
    fixed = FileFix(path, before)
    for request in requests:
        if request.site is not None and maker(request.code) is not None:
            _fix_site(request, fixed, start_method)
    done = set()
    for request in requests:
        fixer = maker(request.code)
        if fixer is None or request.code in done:
            continue
        if fixer.STATIC:
            done.add(request.code)
            _fix_static(request.code, fixed, start_method, keep)
        elif request.site is None:
            _fix_runtime(request, fixed, start_method)
    return fixed


def combine(requests: List[Request], texts=None, start_method="spawn", keep=None):
    """{path: FileFix} for every file the requests name; ``texts`` holds the current
    text of files already changed (else the file is read); ``keep``: see :func:`_kept`."""
    by_file = {}
    for request in requests:
        by_file.setdefault(request.path, []).append(request)
    fixes = {}
    for path, asked in by_file.items():
        before = (texts or {}).get(path)
        if before is None:
            try:
                with open(path, "r", encoding="utf-8", newline="") as handle:
                    before = handle.read()
            except (OSError, UnicodeDecodeError):
                continue
        fixes[path] = fix_file(path, before, asked, start_method, keep)
        for new_path, text in fixes[path].creates.items():
            if new_path not in fixes and not os.path.exists(new_path):
                fixes[new_path] = FileFix(new_path, "", created=True)
                fixes[new_path].after = text
                fixes[new_path].steps.append("created by the fix of %s"
                                             % os.path.basename(path))
    return fixes


def combined_diff(fixes, cwd=None):
    """One unified diff of every changed file, in path order; None when nothing changed."""
    parts = [fixes[path].diff(cwd) for path in sorted(fixes) if fixes[path].changed]
    return "".join(parts) or None
