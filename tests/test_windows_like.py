"""The doctor and the pytest plugin with the platform layer on its Windows paths (see
``tests/windows_like.py``): no SIGUSR2, SIGKILL, SIGSTOP, killpg, setsid, waitid or
``resource`` for the project's code. A full run still finds the cause, asks a stuck
worker for its stacks, ends its tree, reports and exits as documented."""
import json
import signal
import tempfile

import needs
import windows_like
from doctor_run import run_doctor
from fixture_markers import folder
from test_doctor_hardening import FOREVER, Doctor
from test_pytest_plugin import CONFTEST, LOADERS, _assert_no_process_left, _records, _run_pytest

PATIENCE_S = 600

pytestmark = needs.linux


def _commands(shim):
    return [command for _pid, command in windows_like.processes(shim)]


def test_a_crash_in_a_worker_is_named_from_its_process_record(tmp_path):
    """A worker's exit status comes from its ``Process`` object, not from waitid."""
    env = windows_like.environment(tmp_path / "shim")
    status, report, _out, err, left = run_doctor(
        ["--json", "dlw203_segfault.py"], folder("dlw203_segfault.py"), limit=PATIENCE_S, env=env)
    assert not left, left
    assert status == 1 and report["outcome"] == "crashed", err[-3000:]
    first = report["diagnoses"][0]
    assert (first["code"], first["line"]) == ("DLW203", 14), report["diagnoses"]
    assert any("killed by signal 11" in e for e in first["evidence"]), first["evidence"]
    # the doctor, the target and its workers all ran with the Windows paths
    commands = _commands(tmp_path / "shim")
    assert len(commands) >= 3 and any("multiprocessing-fork" in c for c in commands), commands


def test_a_stuck_worker_answers_a_trigger_file_with_its_stack(tmp_path):
    env = windows_like.environment(tmp_path / "shim")
    status, report, _out, err, left = run_doctor(
        ["--json", "--timeout", "40", "dlw206_hang.py"], folder("dlw206_hang.py"),
        limit=PATIENCE_S, env=env)
    assert not left, left
    assert report["outcome"] == "timeout", err[-3000:]
    first = report["diagnoses"][0]
    assert (first["code"], first["line"], first["confidence"]) == ("DLW206", 17, "likely")
    assert any("dlw206_hang.py\", line 17 in __getitem__" in e for e in first["evidence"])
    assert status == 1


def test_sigterm_ends_the_tree_and_still_reports(tmp_path):
    (tmp_path / "train.py").write_text(FOREVER)
    env = windows_like.environment(tmp_path / "shim")
    env["TMPDIR"] = tempfile.mkdtemp(prefix="dlw-t-")
    doctor = Doctor(["--json", "train.py"], tmp_path, env=env)
    doctor.wait_for("first batch")
    doctor.proc.send_signal(signal.SIGTERM)
    status, out, err, left = doctor.finish()
    assert status == 128 + signal.SIGTERM, err[-3000:]
    report = json.loads(out)
    assert report["outcome"] == "stopped" and not left, (report, left)


PLUGIN_TESTS = '''
import torch
from torch.utils.data import DataLoader

from loaders import Broken, Compose, Lambda, Squares, Stuck, double


def test_good(dataloader_doctor):
    report = dataloader_doctor.check(DataLoader(Squares(), batch_size=2, num_workers=2),
                                     batches=2)
    assert len(report.worker_pids) == 2


def test_lambda(dataloader_doctor):
    dataloader_doctor.check(DataLoader(Squares(Compose([double, Lambda(lambda x: x)])),
                                       num_workers=2))


def test_raises(dataloader_doctor):
    dataloader_doctor.check(DataLoader(Broken(), num_workers=1))


def test_hangs(dataloader_doctor):
    dataloader_doctor.check(DataLoader(Stuck(), num_workers=1), timeout=20)
'''


def test_the_pytest_plugin_checks_and_ends_its_workers(pytester, monkeypatch, tmp_path):
    """No SIGALRM: the time limit is the watchdog thread's; no SIGUSR1: no stacks, but
    the hang is still named and its worker ended."""
    for name, value in windows_like.environment(tmp_path / "shim").items():
        monkeypatch.setenv(name, value)
    pytester.makepyfile(loaders=LOADERS, conftest=CONFTEST, test_loaders=PLUGIN_TESTS)
    result = _run_pytest(pytester, "-p", "no:cacheprovider", timeout=PATIENCE_S)
    result.assert_outcomes(passed=1, failed=3)
    text = result.stdout.str()
    assert "DLW102" in text and "DLW205" in text and "KeyError: 'missing'" in text
    assert "DLW206 " in text and "no batch in 20s" in text, text[-3000:]
    # pytest and the warm worker server it spawned (whose forks are the workers) ran with
    # the Windows paths
    commands = _commands(tmp_path / "shim")
    assert len(commands) >= 2 and "--basetemp" in commands[0], commands
    _assert_no_process_left(_records(pytester))
