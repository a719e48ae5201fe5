"""Patches that fix the crash: one small libcst maker per cause, a unified diff out.

``make_patch(code, path, source, line, facts)`` returns a unified diff against the
file (``--- a/PATH`` / ``+++ b/PATH``) or None where no safe patch exists; the
catalog's "Fix safety" section then gives the fix in words. A patch is only made when
it compiles and the checker finds nothing in the patched file that it did not find
before (:func:`new_problems`): the proof it has without a run, which the report states
(``verified`` stays null, "not yet run: use --verify") until ``--verify`` re-runs it.

For a cause the static checker sees (DLW1xx) the maker is run once per finding of
that code in the file, each time on the result of the last, until the checker has
nothing left to say about that code; a maker that cannot fix one of them, or a result
the checker still flags, gives no patch at all. Runtime causes (DLW2xx) are
fixed once, at the place the run pointed to. A maker is its cause folder's ``patch.py``
(:func:`flake8_dlworker.catalog.module`); ``STATIC`` in it says which of the two it is.

A maker may also create files: it then returns a :class:`Rewrite`, the new text of its
file that carries the created files' texts; the diff adds them (``--- /dev/null``).
"""
import ast
import difflib
import functools
import importlib
import os

from flake8_dlworker import catalog

#: at most this many findings of one code are fixed in one file
_ROUNDS = 20


class Rewrite(str):
    """A maker's new text for its file, with the files the fix creates beside it
    (``created``: absolute path -> text), such as a module that takes a definition out
    of a package's ``__main__.py``."""

    def __new__(cls, text, created):
        self = super().__new__(cls, text)
        self.created = dict(created)
        return self


def created_by(text):
    """The files a maker's result creates: {path: text}, empty for a plain string."""
    return getattr(text, "created", {})


def maker(code):
    """The maker module of ``code`` (its cause folder's ``patch.py``), or None."""
    name = catalog.module(code, "patch")
    return importlib.import_module(name) if name is not None else None


def static_findings(source, path, code, start_method="spawn"):
    from flake8_dlworker.plugin import findings

    try:
        tree = ast.parse(source, path or "<patch>")
    except (SyntaxError, ValueError):
        return []
    return [f for f in findings(tree, path or "<patch>", start_method) if f.code == code]


def new_problems(before, after, path, start_method="spawn"):
    """The codes the checker finds more often in ``after`` than in ``before``, sorted:
    what a patch would add. A patch is handed over only when it adds none (and
    compiles): the proof a patch has without a run; ``--verify`` re-runs it."""
    old = _codes_found(before, path, start_method)
    new = _codes_found(after, path, start_method)
    return sorted(code for code in new if new[code] > old[code])


@functools.lru_cache(maxsize=8)
def _codes_found(text, path, start_method):
    """How many findings of each code the checker has in ``text`` (a step's result is
    the next step's input: each text is checked once)."""
    from collections import Counter

    from flake8_dlworker.plugin import findings

    try:
        tree = ast.parse(text, path or "<patch>")
    except (SyntaxError, ValueError):
        return Counter()
    return Counter(f.code for f in findings(tree, path or "<patch>", start_method))


def fixed_source(code, path, source, line=None, facts=None, start_method="spawn"):
    """The whole fixed source, or None where no safe patch exists."""
    fixer = maker(code)
    if fixer is None:
        return None
    created = {}
    if not fixer.STATIC:
        new = fixer.fix(source, line, facts or {})
    else:
        new = source
        for _ in range(_ROUNDS):
            found = static_findings(new, path, code, start_method)
            if not found:
                break
            at_line = [f for f in found if f.line == line]
            finding = (at_line or found)[0]
            fixed = fixer.fix(new, finding, dict(facts or {}, path=path))
            if fixed is None or fixed == new:
                return None
            if len(static_findings(fixed, path, code, start_method)) >= len(found):
                return None  # no progress: the checker still sees the same
            created.update(created_by(fixed))
            new = fixed
        else:
            return None
        if static_findings(new, path, code, start_method):
            return None
    if new is None or new == source:
        return None
    try:
        compile(new, path or "<patch>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    if new_problems(source, new, path, start_method):
        return None
    return Rewrite(new, created) if created else new


def unified_diff(path, old, new, created=False):
    """A unified diff that ``patch -p1`` and ``git apply`` accept; with ``created``,
    the diff of a new file (``--- /dev/null``)."""
    lines = difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                 "/dev/null" if created else "a/" + path, "b/" + path)
    out = []
    for text in lines:
        if not text.endswith("\n"):
            text += "\n\\ No newline at end of file\n"
        out.append(text)
    return "".join(out) or None


def make_patch(code, path, source, line, facts=None, start_method="spawn"):
    """A unified diff against ``path`` that fixes ``code``, or None."""
    try:
        new = fixed_source(code, path, source, line, facts, start_method)
    except Exception:  # a maker's failure is "no patch", never the doctor's crash
        if os.environ.get("DLW_DOCTOR_DEBUG"):
            raise
        return None
    if new is None:
        return None
    return unified_diff(path, source, new) + created_diffs(path, created_by(new))


def created_diffs(path, created):
    """The diffs that create ``created``'s files, named relative to ``path``'s folder
    the way ``path`` itself is named."""
    folder = os.path.dirname(path)
    parts = []
    for new_path in sorted(created):
        name = os.path.join(folder, os.path.basename(new_path)).replace(os.sep, "/")
        parts.append(unified_diff(name, "", created[new_path], created=True))
    return "".join(parts)
