"""``doctor check --fix``: every static finding's patch, composed per file and written in
place, without running anything (like ``ruff check --fix``)."""
import os
import sys

from doctor import signals
from doctor.patches import CODES, maker, write
from doctor.patches.combine import Request, fix_file
from doctor.patches.workflow import _create, under_cwd
from doctor.patches.workflow import relative_path as _relative
from flake8_dlworker.untrusted import inert_line


def fix_files(paths, start_method="spawn", out=None):
    """Fix and write each file; the number of files written. A signal noted by
    :mod:`doctor.signals` stops it before the next file (and a file's write)."""
    from doctor.static import static_findings

    out = out or sys.stderr
    written = 0
    for path in paths:
        if signals.received() is not None:
            break
        path = os.path.abspath(path)
        codes = [f["code"] for f in static_findings(path, start_method)]
        asked = [Request(code, path) for code in CODES
                 if code in codes and maker(code).STATIC]
        if not asked:
            continue
        if not under_cwd(path):
            print("doctor: not written: %s lies outside the working directory"
                  % relative_path(path), file=out)
            continue
        with open(path, "r", encoding="utf-8", newline="") as handle:
            before = handle.read()
        fixed = fix_file(path, before, asked, start_method)
        if not fixed.changed:
            continue
        made = [_create(new_path, relative_path(new_path), text, out)
                for new_path, text in sorted(fixed.creates.items())]
        if not all(made):
            print("doctor: not written: %s: a file its fix needs was not written"
                  % relative_path(path), file=out)
            continue
        written += len(made)
        try:  # the same safe write as --apply: links, owner, mode, read-only, edits meanwhile
            backup = write.replace_checked(path, before, fixed.after)
        except write.NotWritten as exc:
            print("doctor: %s" % inert_line(exc), file=out)
            continue
        except OSError as exc:
            print("doctor: not written: %s: %s" % (relative_path(path), exc.strerror or exc),
                  file=out)
            continue
        written += 1
        print("doctor: fixed %s: %s (backup: %s)" % (relative_path(path), "; ".join(fixed.steps),
                                                     relative_path(backup)), file=out)
    return written


def relative_path(path):
    """The path as the messages show it: relative, and inert (a file name is untrusted)."""
    return inert_line(_relative(path))
