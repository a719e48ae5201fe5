"""The catalog's documented examples (``causes/<CODE>/invalid/NN.py``, ``valid/NN.py``)
run as they are, under the doctor with a forced spawn start method: an INVALID one of a
cause that crashes a run really fails with that cause's runtime error, and the doctor
names its cause first, at the line its static finding names; a VALID one runs to the
end with nothing to say; and no run leaves a process behind. An example that imports a
package this Python lacks (torchvision) is skipped, and so are the two that read a
data file they do not make, and on a host without CUDA a VALID DLW107 example that uses
CUDA in the main process.

The suite runs the docs' Example and Use instead of each such cause (the first INVALID
and the first VALID example, what ``docs/rules.md`` shows). ``DLW_DOCUMENTED=all``
runs every documented example of those causes (79 runs, about 11 minutes of CPU).
"""
import ast
import os
from importlib.util import find_spec
from pathlib import Path

import pytest

import needs
from doctor.static import static_findings
from doctor_run import run_doctor
from fixture_markers import CAUSES, short
from flake8_dlworker.catalog import RULES

#: the causes whose documented examples crash a run under spawn on any host (DLW107's
#: first CUDA call fails in the worker on a host without one; on a CUDA host it runs):
#: those whose record says what the crash prints (``crash_texts``)
CRASHING = tuple(code for code, rule in RULES.items() if rule.texts("crash_texts"))
#: examples that read a file of the user's; the doc's point needs no data to be made
NEEDS_DATA = {"DLW108/invalid/02.py": "frames.h5", "DLW108/valid/04.py": "rows.db"}


def _cases():
    every = os.environ.get("DLW_DOCUMENTED") == "all"
    for code in CRASHING:
        for kind in ("invalid", "valid"):
            paths = RULES[code].example_paths(kind, documented=True)
            for path in paths if every else paths[:1]:
                yield pytest.param(code, kind, Path(path), id=short(path))


def _missing_imports(path):
    """The top-level modules the example imports that neither this Python nor the
    causes folder has."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return sorted(n for n in names
                  if find_spec(n) is None and not (CAUSES / (n + ".py")).is_file())


@needs.torch
@pytest.mark.parametrize("code, kind, path", list(_cases()))
def test_documented_example_under_the_doctor(code, kind, path):
    missing = _missing_imports(path)
    if missing:
        pytest.skip("imports %s, not installed here" % ", ".join(missing))
    if short(path) in NEEDS_DATA:
        pytest.skip("reads %s, a file of the user's" % NEEDS_DATA[short(path)])
    status, report, _out, output, left = run_doctor(["--json", path.name], path.parent)
    assert not left, "processes left behind: %s" % left
    assert report is not None, output[-3000:]
    if kind == "valid":
        if code == "DLW107" and "Torch not compiled with CUDA enabled" in output:
            pytest.skip("the example uses CUDA in the main process; this host has none")
        assert (status, report["outcome"], report["diagnoses"]) == (0, "passed", []), \
            output[-3000:]
        return
    if code == "DLW107" and report["outcome"] == "passed":
        pytest.skip("the run reaches no CUDA here: the example falls back to the CPU, or a "
                    "CUDA host runs it under spawn, one CUDA context per worker")
    # the run's own error, in the parent or a child (a child that fails to start
    # may leave its parent running to the end)
    printed = RULES[code].texts("crash_texts")
    assert status == 1 and any(text in output for text in printed), output[-3000:]
    line = min(f["line"] for f in static_findings(str(path)) if f["code"] == code)
    first = report["diagnoses"][0]
    assert (first["code"], first["line"]) == (code, line), (report["diagnoses"], output[-3000:])
