"""The checker raises on none of the CPython standard library's files: all those the
prefilter lets through and every third of the rest (``DLW_FUZZ=2`` or more: every
file)."""
import ast
import os
import sysconfig
import warnings
from pathlib import Path

from flake8_dlworker.plugin import findings, might_start_workers

EVERY = 1 if int(os.environ.get("DLW_FUZZ", "1")) > 1 else 3


def test_no_exception_on_stdlib():
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts)
    assert len(files) > 1500
    failures, checked = [], 0
    for i, path in enumerate(files):
        source = path.read_bytes()
        if i % EVERY and not might_start_workers(source.decode("latin-1")):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source, str(path))
        except (SyntaxError, ValueError):
            continue  # test data with deliberate syntax errors; flake8 reports E999
        checked += 1
        try:
            findings(tree, str(path))  # the full walk: no prefilter here
        except Exception as exc:  # the point of the test is to catch any
            failures.append("%s: %r" % (path, exc))
    assert checked > 500
    assert failures == [], "\n".join(failures[:20])
