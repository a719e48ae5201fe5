"""``doctor check --fix`` and ``--diff``: the reported findings' patches, composed per
file (:mod:`doctor.patches.combine`), without running anything (like ``ruff check
--fix``). ``--fix`` writes each file in place through the writer ``--apply`` uses;
``--diff`` prints one diff per file, which ``git apply`` and ``patch -p1`` take.

A finding flake8 does not report (``# noqa``, ``per-file-ignores``, ``extend-ignore``,
the ``dlw-start-method``) is never fixed: each round of a maker sees only the findings
flake8 would report in the file's current text.
"""
import os
import sys

from doctor import signals
from doctor.patches import maker, write
from doctor.patches.combine import Request, combine, combined_diff
from doctor.patches.write import under_cwd
from flake8_dlworker import catalog
from flake8_dlworker.untrusted import inert_line

#: a UTF-8 byte order mark, as the text read from the file starts with it
BOM = "\ufeff"


def file_fixes(found, out=None):
    """{path: FileFix} for the files of ``found`` (a :class:`doctor.lint.Report`) whose
    reported findings have a patch maker; a file that cannot be fixed is one line on
    ``out``."""
    from doctor import lint

    out = out or sys.stderr
    by_file = {}
    for finding in found.findings:
        fixer = maker(finding["code"])
        if finding.get("cell") is None and fixer is not None and fixer.STATIC:
            by_file.setdefault(os.path.abspath(finding["path"]), set()).add(finding["code"])
    requests, texts, marked = [], {}, set()
    for path, codes in sorted(by_file.items()):
        text = _text(path, out)
        if text is None:
            continue
        if text.startswith(BOM):  # Python skips it; the makers parse the text after it
            marked.add(path)
            text = text[len(BOM):]
        texts[path] = text
        requests += [Request(code, path) for code in catalog.having("patch")
                     if code in codes]
    fixes = combine(requests, texts, found.options.dlw_start_method,
                    keep=lint.keeper(found.options))
    for path in marked & set(fixes):  # the file keeps its byte order mark
        fixes[path].before = BOM + fixes[path].before
        fixes[path].after = BOM + fixes[path].after
    return fixes


def _text(path, out):
    """The file's text when it may be fixed, else None and one line on ``out``."""
    shown = relative_path(path)
    if not under_cwd(path):
        print("doctor: not fixed: %s lies outside the working directory" % shown, file=out)
        return None
    try:
        with open(path, "r", encoding="utf-8", newline="") as handle:
            return handle.read()
    except UnicodeDecodeError:
        print("doctor: not fixed: %s: not UTF-8 text (fixes are written as UTF-8); "
              "the findings say what to change" % shown, file=out)
    except OSError as exc:
        print("doctor: not fixed: %s: cannot read: %s" % (shown, exc.strerror or exc),
              file=out)
    return None


def diff_text(found):
    """``--diff``: every file's composed fix as one diff per file ('' when none)."""
    return combined_diff(file_fixes(found)) or ""


def fix_files(found, out=None):
    """``--fix``: write each file's composed fix; the number of files written. A signal
    noted by :mod:`doctor.signals` stops it before the next file (and a file's write)."""
    out = out or sys.stderr
    written = 0
    for path, fixed in sorted(file_fixes(found, out).items()):
        if signals.received() is not None:
            break
        if fixed.created or not fixed.changed:
            continue  # a created file is written with the file whose fix makes it
        # the same safe write as --apply: links (hard ones too), owner, mode, read-only,
        # edits meanwhile
        written += write.write_checked(path, fixed, relative_path, out)
    return written


def relative_path(path):
    """The path as the messages show it: relative, and inert (a file name is untrusted)."""
    return inert_line(write.relative_path(path))
