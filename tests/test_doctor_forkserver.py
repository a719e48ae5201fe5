"""The user's own start method is forkserver (Linux's default from Python 3.14): the
workers are children of the fork server, not of the main process, and print on the
server's stderr. The doctor still names the same cause at the same line, and reads the
workers' exits (from their Process records, since waitid cannot see them)."""

import pytest

from doctor_run import run_doctor
from fixture_markers import find
from test_doctor_fixtures import expected

import needs

pytestmark = needs.posix

CASES = ["dlw201_sigkill.py", "dlw203_segfault.py", "dlw205_raise.py",
         "dlw101_pass_loader.py", "dlw104_guard_dataset.py"]
#: the evidence that only a worker's exit status gives
EXIT_EVIDENCE = {"dlw203_segfault.py": "killed by signal 11",
                 "dlw201_sigkill.py": "killed by signal 9"}


@pytest.mark.parametrize("name", CASES)
def test_forkserver_runs_name_the_same_cause(name):
    path = find(name)
    status, report, _out, err, left = run_doctor(
        ["--json", "--start-method", "forkserver", path.name], path.parent)
    assert not left, left
    assert report["start_method"] == "forkserver" and status == 1, err[-3000:]
    first = report["diagnoses"][0]
    assert (first["code"], first["line"]) == expected(path), report["diagnoses"]
    if name in EXIT_EVIDENCE:
        assert any(EXIT_EVIDENCE[name] in e for e in first["evidence"]), first["evidence"]
