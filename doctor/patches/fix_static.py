"""``doctor check --fix``: every static finding's patch, composed per file and written in
place, without running anything (like ``ruff check --fix``)."""
import os
import sys

from doctor.patches import CODES, maker
from doctor.patches.combine import Request, fix_file
from doctor.patches.workflow import relative_path, under_cwd, write_atomic


def fix_files(paths, start_method="spawn", out=None):
    """Fix and write each file; the number of files written."""
    from doctor.static import static_findings

    out = out or sys.stderr
    written = 0
    for path in paths:
        path = os.path.abspath(path)
        codes = [f["code"] for f in static_findings(path, start_method)]
        asked = [Request(code, path) for code in CODES
                 if code in codes and maker(code).STATIC]
        if not asked:
            continue
        if not under_cwd(path):
            print("doctor: %s lies outside the working directory; not written"
                  % relative_path(path), file=out)
            continue
        with open(path, "r", encoding="utf-8", newline="") as handle:
            before = handle.read()
        fixed = fix_file(path, before, asked, start_method)
        if not fixed.changed:
            continue
        try:
            write_atomic(path, fixed.after)
        except OSError as exc:
            print("doctor: %s: not written: %s" % (relative_path(path), exc), file=out)
            continue
        written += 1
        print("doctor: fixed %s: %s" % (relative_path(path), "; ".join(fixed.steps)),
              file=out)
    return written
