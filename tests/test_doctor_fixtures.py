"""Every fixture through ``python -m doctor --json``: crashing ones name their cause
first, at the marked line; clean ones pass with no diagnosis; none leaves a process."""
import re

import pytest

from doctor_run import run_doctor
from fixture_markers import FIXTURES, RUNTIME, expected_findings, fixture_files

#: ``# doctor: DLW2xx`` on the line the diagnosis must point at
DOCTOR_MARKER = re.compile(r"#\s*doctor:\s*(DLW\d{3})")
#: fixtures that hang instead of crashing: the doctor's --timeout ends them
TIMEOUTS = {"dlw101_pool.py": 20, "dlw206_hang.py": 15}
#: causes the doctor cannot see on this host, with the reason
NOT_ON_THIS_HOST = {
    "DLW105": "pin_memory only exhausts a host with little RAM; the check is static",
}


#: flake8 is right to stay silent on these, and the doctor right to report them
DOCTOR_ONLY = {
    # the doctor forces spawn even where a loader asks for fork, as the issue asks:
    # the lambda that fork tolerates then breaks, as it would on Windows and macOS
    "clean_fork_context.py": ("DLW102", 12),
}


def expected(path):
    """(code, line) the doctor must report first, or None for a clean fixture."""
    if path.name in DOCTOR_ONLY:
        return DOCTOR_ONLY[path.name]
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        match = DOCTOR_MARKER.search(line)
        if match:
            return match.group(1), lineno
    found = sorted(expected_findings(path))
    if not found:
        return None
    line, _col, code = found[0]
    return code, line


def _cases():
    paths = fixture_files() + sorted(RUNTIME.glob("*.py"))
    for path in paths:
        want = expected(path)
        if want and want[0] in NOT_ON_THIS_HOST:
            continue
        if path.name == "__main__.py":
            yield pytest.param(["-m", path.parent.name], FIXTURES, path, want,
                               id=path.parent.name)
        else:
            yield pytest.param([path.name], path.parent, path, want,
                               id=path.relative_to(FIXTURES).as_posix())


@pytest.mark.parametrize("target, cwd, path, want", list(_cases()))
def test_doctor_names_the_cause(target, cwd, path, want):
    args = ["--json"]
    if path.name in TIMEOUTS:
        args += ["--timeout", str(TIMEOUTS[path.name])]
    status, report, _out, err, left = run_doctor(args + target, cwd)
    assert not left, "processes left behind: %s" % left
    assert report is not None, err[-3000:]
    assert report["schema"] == 1 and report["start_method"] == "spawn"
    if want is None:
        assert (status, report["outcome"], report["diagnoses"]) == (0, "passed", []), err[-3000:]
        return
    assert status == 1, err[-3000:]
    first = report["diagnoses"][0]
    code, line = want
    assert (first["code"], first["line"]) == (code, line), (report["diagnoses"], err[-3000:])
    assert first["evidence"] and first["explanation"]
    if path.name in TIMEOUTS:
        assert report["outcome"] == "timeout"
