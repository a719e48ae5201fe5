"""The checker raises on none of the CPython standard library's files."""
import ast
import sysconfig
import warnings
from pathlib import Path

from flake8_dlworker.plugin import findings


def test_no_exception_on_stdlib():
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = [p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts]
    assert len(files) > 500
    failures, checked = [], 0
    for path in files:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(path.read_bytes(), str(path))
        except (SyntaxError, ValueError):
            continue  # test data with deliberate syntax errors; flake8 reports E999
        checked += 1
        try:
            findings(tree, str(path))  # the full walk: no prefilter here
        except Exception as exc:  # the point of the test is to catch any
            failures.append("%s: %r" % (path, exc))
    assert checked > 500
    assert failures == [], "\n".join(failures[:20])
