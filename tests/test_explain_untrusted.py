"""A pasted log is untrusted input: ``doctor explain`` reads a file that the log names
only when it is a regular file of bounded size inside the working directory (or a
``--source`` folder), readable without privilege; the log file itself must be a
regular file (or ``-``), read up to a bound.  Real FIFOs, symlinks, devices and owners."""
import json
import os
import resource
import stat
import subprocess
import sys

import pytest

from doctor.explain import explain as explain_log

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECRET = "TOPSECRET-7f3a"
#: a generous bound: a reader blocked on a FIFO never ends, a working one takes seconds
LIMIT_S = 120


def crash_log(path, line=2):
    """A worker KeyError whose only user frame is ``path``, line ``line``."""
    return (
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.11/site-packages/torch/utils/data/dataloader.py", '
        "line 1345, in _next_data\n"
        "    return self._process_data(data)\n"
        "KeyError: Caught KeyError in DataLoader worker process 0.\n"
        "Original Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.11/site-packages/torch/utils/data/_utils/worker.py", '
        "line 308, in _worker_loop\n"
        "    data = fetcher.fetch(index)\n"
        '  File "%s", line %d, in __getitem__\n'
        "    return self.items[i]\n"
        "KeyError: 5\n" % (path, line))


def _limit_memory():
    """An explain that reads /dev/zero must hit this wall, not the machine's."""
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def run_explain(log, cwd, *extra, json_out=False):
    command = [sys.executable, "-m", "doctor", "explain", *extra, str(log)]
    if json_out:
        command.insert(4, "--json")
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run(command, cwd=str(cwd), capture_output=True, timeout=LIMIT_S,
                          env=env, preexec_fn=_limit_memory)


def secret_file(path):
    path.write_text("class Data:\n    KEY = %r\n    x = 1\n" % SECRET)
    return path


@pytest.fixture
def project(tmp_path):
    """(working directory, a folder outside it)."""
    work = tmp_path / "work"
    outside = tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    return work, outside


def _no_excerpt(result, why):
    out = result.stdout.decode("utf-8", "replace")
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "DLW205" in out
    assert SECRET not in out
    assert "(no excerpt: %s" % why in out, out
    return out


def test_file_outside_the_working_directory_is_not_printed(project):
    work, outside = project
    secret = secret_file(outside / "data.py")
    log = work / "crash.log"
    log.write_text(crash_log(secret))
    out = _no_excerpt(run_explain(log, work), "it lies outside the working directory")
    assert "at %s:2" % secret in out  # still reported, without its lines
    report = json.loads(run_explain(log, work, json_out=True).stdout)
    assert SECRET not in json.dumps(report)


def test_source_option_allows_a_folder(project):
    work, outside = project
    secret_file(outside / "data.py")
    log = work / "crash.log"
    log.write_text(crash_log(outside / "data.py"))
    result = run_explain(log, work, "--source", str(outside))
    assert result.returncode == 1
    assert SECRET in result.stdout.decode()


def test_source_option_must_be_a_folder(project):
    work, _ = project
    log = work / "crash.log"
    log.write_text(crash_log(work / "data.py"))
    result = run_explain(log, work, "--source", str(work / "nope"))
    assert result.returncode == 2
    assert result.stderr.decode().strip().endswith("not a directory")


def test_symlink_out_of_the_tree_is_not_followed(project):
    work, outside = project
    secret = secret_file(outside / "private.py")
    (work / "data.py").symlink_to(secret)
    log = work / "crash.log"
    log.write_text(crash_log(work / "data.py"))
    _no_excerpt(run_explain(log, work), "it lies outside the working directory")


def test_symlink_inside_the_tree_is_read(project):
    work, _ = project
    secret_file(work / "real.py")
    (work / "data.py").symlink_to(work / "real.py")
    log = work / "crash.log"
    log.write_text(crash_log(work / "data.py"))
    assert SECRET in run_explain(log, work).stdout.decode()


def test_fifo_named_by_a_frame_does_not_hang(project):
    work, _ = project
    os.mkfifo(str(work / "data.py"))
    log = work / "crash.log"
    log.write_text(crash_log(work / "data.py"))
    _no_excerpt(run_explain(log, work), "it is not a regular file")


def test_dev_zero_named_by_a_frame_is_not_read(project):
    work, _ = project
    log = work / "crash.log"
    log.write_text(crash_log("/dev/zero", line=3))
    _no_excerpt(run_explain(log, work), "it lies outside the working directory")
    # even in an allowed folder, a device is never read
    _no_excerpt(run_explain(log, work, "--source", "/dev"), "it is not a regular file")


def test_oversized_source_is_not_read(project):
    work, _ = project
    big = work / "data.py"
    with open(str(big), "wb") as handle:
        handle.truncate(1 << 30)  # sparse: 1 GB of NULs
    log = work / "crash.log"
    log.write_text(crash_log(big))
    _no_excerpt(run_explain(log, work), "it is larger than")


def test_file_of_another_user_readable_only_by_root(project):
    """A 0600 file owned by another uid: root could read it, the user it belongs to
    pasted nothing of it, so it is not printed."""
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another uid")
    work, _ = project
    secret = secret_file(work / "data.py")
    os.chown(str(secret), 65534, 65534)
    secret.chmod(0o600)
    log = work / "crash.log"
    log.write_text(crash_log(secret))
    _no_excerpt(run_explain(log, work), "only a privileged user may read it")


def test_own_private_file_in_the_tree_is_read(project):
    work, _ = project
    secret = secret_file(work / "data.py")
    secret.chmod(0o600)
    log = work / "crash.log"
    log.write_text(crash_log(secret))
    assert SECRET in run_explain(log, work).stdout.decode()


# -- the log file itself ------------------------------------------------------------------

def test_fifo_as_the_log_is_refused_not_waited_on(project):
    work, _ = project
    fifo = work / "crash.log"
    os.mkfifo(str(fifo))
    result = run_explain(fifo, work)
    err = result.stderr.decode()
    assert result.returncode == 2, err
    assert result.stdout == b""
    assert len(err.strip().splitlines()) == 1
    assert "not a regular file" in err
    assert stat.S_ISFIFO(os.stat(str(fifo)).st_mode)


def test_dev_zero_as_the_log_is_refused(project):
    work, _ = project
    result = run_explain("/dev/zero", work)
    assert result.returncode == 2
    assert "not a regular file" in result.stderr.decode()


def test_log_larger_than_the_bound_is_read_from_its_end(tmp_path):
    """Only the last ``limit`` bytes are read, and the report says so."""
    log = tmp_path / "long.log"
    noise = "epoch 1 step 100 loss 0.25 lr 3e-4\n" * 60000  # about 2 MB
    log.write_text(noise + crash_log(tmp_path / "data.py"))
    ev = explain_log(str(log), limit=1 << 20)
    assert ev.hints["unread"].startswith("the log is larger than 2 MB: only its last 1 MB")
    assert [e.type for e in ev.exceptions] == ["KeyError"]


def test_standard_input_is_read_up_to_the_bound(tmp_path):
    crash = (tmp_path / "crash.log")
    crash.write_text(crash_log(tmp_path / "data.py") + "more output\n" * 200000)
    with open(str(crash), "rb") as handle:
        ev = explain_log("-", handle, limit=1 << 20)
    assert ev.hints["unread"] == "only the first 1 MB of the log were read"
    assert [e.type for e in ev.exceptions] == ["KeyError"]
