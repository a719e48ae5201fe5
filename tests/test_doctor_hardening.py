"""The doctor under a hostile user and a busy CI: signals to the doctor, processes that
try to escape, files that are not scripts, timeouts, unexplained crashes, live output.
Every case runs the real doctor on a real script; waits are for events, with wide
bounds, never for a fixed time."""
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import pytest

from doctor_run import TOKEN, doctor_command, leftovers, run_doctor

import needs
from tiers import run_python, starts_torch

pytestmark = needs.posix

#: an upper bound for what should take seconds, so that a loaded machine still passes
PATIENCE_S = 300

#: batches flow for ever, a hundred a second at most, from the same two workers every
#: epoch: a test that lets it run for its --timeout does not keep the cores busy
FOREVER = textwrap.dedent("""\
    import sys
    import time
    import torch
    from torch.utils.data import DataLoader, TensorDataset


    def main():
        loader = DataLoader(TensorDataset(torch.arange(64.0)), batch_size=2, num_workers=2,
                            persistent_workers=True)
        for epoch in range(10 ** 6):
            for i, batch in enumerate(loader):
                if epoch == 0 and i == 0:
                    print("first batch", flush=True)
                time.sleep(0.01)


    if __name__ == "__main__":
        main()
""")


class Doctor:
    """``python -m doctor`` started in the background, its stderr read as it comes."""

    @starts_torch
    def __init__(self, args, cwd, env=None, own_group=False):
        self.token = "hardening-%d-%d" % (os.getpid(), id(self))
        full_env = dict(os.environ, **(env or {}))
        full_env[TOKEN] = self.token
        self.proc = subprocess.Popen([sys.executable, "-m", "doctor", *args], cwd=cwd,
                                     env=full_env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=own_group)
        self.err = []
        self.lines = queue.Queue()
        self.out = []
        self._readers = [threading.Thread(target=self._read, args=(self.proc.stderr, True)),
                         threading.Thread(target=self._read, args=(self.proc.stdout, False))]
        for reader in self._readers:
            reader.daemon = True
            reader.start()

    def _read(self, stream, is_err):
        """Chunks as they come (a line without its newline too), to ``self.lines``."""
        fd = stream.fileno()
        while True:
            raw = os.read(fd, 65536)
            if not raw:
                break
            text = raw.decode("utf-8", "replace")
            (self.err if is_err else self.out).append(text)
            self.lines.put(text)
        self.lines.put(None)

    def wait_for(self, text):
        """Until ``text`` was printed, on either stream. If the doctor ends first or
        nothing comes for PATIENCE_S, the doctor and its tree are killed and the test
        fails."""
        seen = ""
        while True:
            try:
                chunk = self.lines.get(timeout=PATIENCE_S)
            except queue.Empty:
                chunk = None
            if chunk is None:
                self.kill()
                raise AssertionError("no %r from the doctor:\n%s" % (
                    text, "".join(self.err)[-3000:]))
            seen = seen[-len(text):] + chunk
            if text in seen:
                return

    def kill(self):
        self.proc.kill()
        for proc in leftovers(self.token):
            proc.kill()

    def finish(self):
        """(exit status, stdout, stderr, processes left behind)."""
        try:
            self.proc.wait(timeout=PATIENCE_S)
        finally:
            if self.proc.poll() is None:
                self.kill()
        for reader in self._readers:
            reader.join(PATIENCE_S)
        left = leftovers(self.token)
        for proc in left:
            proc.kill()
        return self.proc.returncode, "".join(self.out), "".join(self.err), left


def _doctor_folders(folder):
    return [p for p in os.listdir(folder) if p.startswith("dlw-doctor-")]


# -- 1. signals to the doctor --------------------------------------------------------

@pytest.mark.parametrize("signals", [
    pytest.param(("SIGTERM",), marks=pytest.mark.e2e),  # the fast tier keeps this one
    ("SIGHUP",), ("SIGINT", "SIGINT")])
def test_a_signal_ends_the_tree_reports_and_exits_128_plus_it(tmp_path, signals):
    (tmp_path / "train.py").write_text(FOREVER)
    # a short folder of its own: torch passes tensors through Unix sockets made under
    # TMPDIR, whose paths may not exceed 107 bytes
    temp = tempfile.mkdtemp(prefix="dlw-t-")
    doctor = Doctor(["--json", "train.py"], tmp_path, env={"TMPDIR": temp})
    doctor.wait_for("first batch")  # the target and its workers are running
    assert _doctor_folders(temp)
    for name in signals:
        doctor.proc.send_signal(getattr(signal, name))
    status, out, err, left = doctor.finish()
    number = getattr(signal, signals[0])
    assert status == 128 + number, err[-3000:]
    report = json.loads(out)  # exactly one JSON object
    assert report["outcome"] == "stopped"
    assert any(signals[0] in note for note in report["notes"]), report["notes"]
    # batches were flowing when the signal came: a healthy run cut short, not a hang
    assert report["diagnoses"] == [], report["diagnoses"]
    assert not left, left
    assert not _doctor_folders(temp)
    assert not os.listdir(temp), os.listdir(temp)
    os.rmdir(temp)


def test_sigkill_of_the_doctors_group_ends_the_run_and_a_later_run_removes_its_folder(
        tmp_path):
    """``kill -KILL -- -PGID`` of the doctor (``timeout -k``, a CI runner's group kill):
    the target runs in a session of its own, which that never reaches; the keeper ends
    it, its workers and its resource tracker, and removes the run's folder. A folder a
    dead doctor left anyway is removed by the next run."""
    (tmp_path / "train.py").write_text(FOREVER)
    temp = tempfile.mkdtemp(prefix="dlw-t-")
    try:
        doctor = Doctor(["--json", "train.py"], tmp_path, env={"TMPDIR": temp},
                        own_group=True)
        doctor.wait_for("first batch")  # the target and its two workers are running
        assert len(leftovers(doctor.token)) >= 4  # target, 2 workers, tracker, keeper
        os.killpg(doctor.proc.pid, signal.SIGKILL)
        doctor.proc.wait(PATIENCE_S)
        deadline = time.monotonic() + 5
        while leftovers(doctor.token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not leftovers(doctor.token), [p.cmdline() for p in leftovers(doctor.token)]
        assert not _doctor_folders(temp)
        gone = subprocess.Popen(["true"])
        gone.wait()  # a pid whose doctor is dead
        left_behind = os.path.join(temp, "dlw-doctor-%d-x1y2" % gone.pid)
        os.makedirs(os.path.join(left_behind, "t"))
        (tmp_path / "quick.py").write_text("print('quick')\n")
        status, _report, _out, err, _left = run_doctor(["quick.py"], tmp_path,
                                                       env={"TMPDIR": temp})
        assert status == 0, err
        assert not os.path.exists(left_behind)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


#: a healthy run whose workers spend their time in the user's own __getitem__: a stack
#: dump taken at any moment shows a worker in user code
HEALTHY_USER_DATASET = textwrap.dedent("""\
    import time
    from torch.utils.data import DataLoader, Dataset


    class Measured(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            time.sleep(0.2)  # reading and decoding a sample
            return float(i)


    def main():
        loader = DataLoader(Measured(), batch_size=2, num_workers=2, persistent_workers=True)
        for epoch in range(10 ** 6):
            for i, batch in enumerate(loader):
                print("batch", epoch, i, flush=True)


    if __name__ == "__main__":
        main()
""")


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_a_healthy_run_ended_by_a_signal_is_no_hang(tmp_path, name):
    """Batches flowing when Ctrl-C or SIGTERM comes: the stacks the doctor takes show a
    worker in the dataset's code, as at any moment of a healthy run; that is no hang."""
    (tmp_path / "train.py").write_text(HEALTHY_USER_DATASET)
    doctor = Doctor(["--json", "train.py"], tmp_path)
    doctor.wait_for("batch 0 6\n")  # batches have been flowing for a while
    doctor.proc.send_signal(getattr(signal, name))
    status, out, err, left = doctor.finish()
    assert status == 128 + getattr(signal, name), err[-3000:]
    report = json.loads(out)
    assert report["outcome"] == "stopped" and report["diagnoses"] == [], report["diagnoses"]
    assert not left


#: crashes under spawn (a lambda collate_fn); its fixed copy runs slowly, a second a
#: sample, so that a signal can reach the doctor while it re-runs the copy
SLOW_WHEN_FIXED = textwrap.dedent("""\
    import time
    from torch.utils.data import DataLoader, Dataset


    class Slow(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            time.sleep(1)
            return i


    def main():
        for batch in DataLoader(Slow(), batch_size=2, num_workers=2,
                                collate_fn=lambda batch: batch):
            print(batch, flush=True)


    if __name__ == "__main__":
        main()
""")


def _rerun_started(token):
    """Whether the doctor's re-run of a patched copy has started (its target runs from
    the doctor's temporary copy)."""
    for proc in leftovers(token):
        try:
            command = " ".join(proc.cmdline())
        except Exception:
            continue
        if "doctor.agent.boot" in command and ("dlw-rounds-" in command or
                                               "dlw-verify-" in command):
            return True
    return False


@pytest.mark.parametrize("option, name", [("--apply", "SIGTERM"), ("--verify", "SIGINT")])
def test_a_signal_during_the_fix_rerun_writes_nothing_and_verifies_nothing(
        tmp_path, option, name):
    (tmp_path / "train.py").write_text(SLOW_WHEN_FIXED)
    doctor = Doctor(["--json", option, "train.py"], tmp_path)
    deadline = time.monotonic() + PATIENCE_S
    while not _rerun_started(doctor.token):  # an event: the copy's target is running
        assert doctor.proc.poll() is None and time.monotonic() < deadline, \
            "".join(doctor.err)[-3000:]
        time.sleep(0.05)
    doctor.proc.send_signal(getattr(signal, name))
    status, out, err, left = doctor.finish()
    assert status == 128 + getattr(signal, name), err[-3000:]
    assert not left, left
    report = json.loads(out)
    assert report["fix"]["verified"] is not True
    assert not any(d["verified"] for d in report["diagnoses"]), report["diagnoses"]
    assert "doctor: wrote" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]
    assert (tmp_path / "train.py").read_text() == SLOW_WHEN_FIXED


def test_ctrl_c_in_the_terminal_report(tmp_path):
    (tmp_path / "train.py").write_text(FOREVER)
    doctor = Doctor(["train.py"], tmp_path)
    doctor.wait_for("first batch")  # the script's own stdout, on the doctor's
    doctor.proc.send_signal(signal.SIGINT)
    status, out, err, left = doctor.finish()
    assert status == 128 + signal.SIGINT, err[-3000:]
    assert "was stopped" in out and "received SIGINT" in out, out
    assert not left


# -- 2. processes that escape ----------------------------------------------------------

ESCAPER = textwrap.dedent("""\
    import os, time
    import torch
    from torch.utils.data import DataLoader, Dataset


    def hop_forever():
        '''Leave the session, leave the tree, and keep changing pid; every hop adds a
        byte to hopper.beat, so that a test sees whether it still runs.'''
        if os.fork() == 0:
            os.setsid()
            with open("hopper.sid", "w") as handle:
                handle.write(str(os.getsid(0)))
            if os.fork() == 0:
                beat = os.open("hopper.beat", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
                while True:
                    if os.fork() != 0:
                        os._exit(0)
                    os.write(beat, b".")
                    time.sleep(0.002)
            os._exit(0)


    class Escaping(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            if i == 0:
                hop_forever()
            return torch.tensor(float(i))


    def main():
        for i, batch in enumerate(DataLoader(Escaping(), batch_size=2, num_workers=2)):
            if i == 8:
                raise ValueError("done")


    if __name__ == "__main__":
        main()
""")


def test_a_worker_that_double_forks_setsids_and_hops_is_ended(tmp_path):
    (tmp_path / "train.py").write_text(ESCAPER)
    status, report, _out, err, left = run_doctor(["--json", "train.py"], tmp_path,
                                                 limit=PATIENCE_S)
    assert not left, left
    assert report["outcome"] == "crashed" and status == 1, err[-3000:]
    assert not report["notes"], report["notes"]
    # a pid that lives 2 ms can slip past a scan of the process table: the heartbeat
    # cannot. It hopped (the file grew) and it no longer does.
    beat = tmp_path / "hopper.beat"
    size = beat.stat().st_size
    assert size > 0
    time.sleep(2.0)  # hops come every few ms: two seconds without one is an end
    if beat.stat().st_size != size:
        _end_hopper(tmp_path)
        pytest.fail("the hopper outlived the doctor")


def _end_hopper(folder, bound_s=30.0):
    """Stop and kill the hopper's process group (its session, named in hopper.sid)
    until its heartbeat stops."""
    group = int((folder / "hopper.sid").read_text())
    beat = folder / "hopper.beat"
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        size = beat.stat().st_size
        for number in (signal.SIGSTOP, signal.SIGKILL):
            try:
                os.killpg(group, number)
            except OSError:
                pass
        time.sleep(0.5)
        if beat.stat().st_size == size:
            return


# -- 4. what is not a script -------------------------------------------------------------

@pytest.mark.parametrize("command", [[], ["check"]])
def test_a_fifo_is_refused_at_once(tmp_path, command):
    os.mkfifo(tmp_path / "train.py")
    status, _report, out, err, left = doctor_command(command + ["train.py"], tmp_path,
                                                     limit=PATIENCE_S)
    assert status == 2 and "not a regular file (a FIFO)" in err, err
    assert err.count("\n") == 1 and out == "" and not left


@pytest.mark.parametrize("command", [[], ["check"]])
def test_a_device_is_refused(tmp_path, command):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    status, _report, _out, err, _left = doctor_command(command + ["/dev/zero"], tmp_path,
                                                       limit=PATIENCE_S)
    assert status == 2 and "not a regular file (a character device)" in err, err


def test_a_huge_sparse_file_is_refused_before_it_is_read(tmp_path):
    with open(tmp_path / "train.py", "wb") as handle:
        handle.truncate(1024 ** 3)  # 1 GB, no block of it on disk
    status, _report, _out, err, _left = doctor_command(["train.py"], tmp_path, limit=PATIENCE_S)
    assert status == 2 and "too large for a Python script" in err, err
    assert err.count("\n") == 1


# -- 6. --timeout ----------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["nan", "inf", "1e-9", "0", "-3"])
def test_meaningless_timeouts_are_usage_errors(tmp_path, value):
    (tmp_path / "train.py").write_text(FOREVER)
    status, _report, _out, err, _left = doctor_command(["--timeout", value, "train.py"], tmp_path,
                                                       limit=PATIENCE_S)
    assert status == 2 and "--timeout" in err and err.count("\n") == 1, err


def test_a_timeout_while_batches_flow_is_no_diagnosis(tmp_path):
    (tmp_path / "train.py").write_text(FOREVER)
    status, report, _out, err, left = run_doctor(["--json", "--timeout", "25", "train.py"],
                                                 tmp_path, limit=PATIENCE_S)
    assert not left
    assert (report["outcome"], report["diagnoses"], status) == ("timeout", [], 0), err[-3000:]


def test_a_timeout_of_a_script_without_a_loader_is_no_diagnosis(tmp_path):
    (tmp_path / "train.py").write_text("import threading\nthreading.Event().wait()\n")
    status, report, _out, err, left = run_doctor(["--json", "--timeout", "3", "train.py"],
                                                 tmp_path, limit=PATIENCE_S)
    assert not left
    assert (report["outcome"], report["diagnoses"], status) == ("timeout", [], 0), err[-3000:]


@needs.linux
def test_an_ended_run_leaves_no_semaphore_behind(tmp_path):
    """SIGKILL leaves a process's named semaphores in /dev/shm; the run's resource
    tracker outlives the rest of the tree long enough to remove them."""
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import multiprocessing
        import pathlib
        import threading

        lock = multiprocessing.get_context("spawn").Lock()
        pathlib.Path("semaphore.txt").write_text(lock._semlock.name)
        threading.Event().wait()
    """))
    status, report, _out, err, left = run_doctor(["--json", "--timeout", "3", "train.py"],
                                                 tmp_path, limit=PATIENCE_S)
    assert not left
    assert (report["outcome"], status) == ("timeout", 0), err[-3000:]
    name = (tmp_path / "semaphore.txt").read_text()
    assert not os.path.exists("/dev/shm/sem." + name.lstrip("/")), name
    assert any("resource tracker removed" in note for note in report["notes"]), report


# -- 7. a crash nothing explains ---------------------------------------------------------------

def test_a_script_that_kills_its_own_group_is_a_failure_with_what_was_seen(tmp_path):
    (tmp_path / "train.py").write_text(FOREVER.replace(
        'print("first batch", flush=True)', "os.killpg(0, 9)").replace(
        "import sys", "import os"))
    status, report, _out, err, left = run_doctor(["--json", "train.py"], tmp_path,
                                                 limit=PATIENCE_S)
    assert not left
    assert (report["outcome"], report["exit_code"], status) == ("crashed", 137, 1), err
    (diag,) = report["diagnoses"]
    assert diag["code"] == "DLW208"
    assert "killed by SIGKILL (exit status 137)" in diag["evidence"][0]


# -- 9. live output ----------------------------------------------------------------------------

def test_a_progress_bar_without_newlines_is_passed_through_as_it_comes(tmp_path):
    """A ``\\r`` progress line reaches the user before the script goes on: the script
    waits, after its bar, for the test to have seen it through the doctor."""
    go = tmp_path / "go"
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import os, sys, time
        sys.stderr.write("\\rtraining 50%%")
        sys.stderr.flush()
        while not os.path.exists(%r):
            time.sleep(0.05)
        sys.stderr.write("\\rtraining 100%%\\n")
    """ % str(go)))
    doctor = Doctor(["--json", "train.py"], tmp_path)
    doctor.wait_for("\rtraining 50%")
    go.write_text("")
    status, out, err, left = doctor.finish()
    assert status == 0 and json.loads(out)["outcome"] == "passed", err
    assert "\rtraining 50%\rtraining 100%\n" in err and not left


def test_one_huge_line_costs_the_doctor_bounded_memory(tmp_path):
    """A 200 MB line on stderr: the doctor passes it through in chunks and keeps a bounded
    part, so its own memory stays far below the line's size."""
    import psutil

    (tmp_path / "train.py").write_text(
        "import sys\nsys.stderr.write('x' * (200 * 1024 * 1024) + '\\n')\n")
    proc = subprocess.Popen([sys.executable, "-m", "doctor", "--json", "train.py"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    watched = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:  # sample the doctor's own memory until it ends
        try:
            peak = max(peak, watched.memory_info().rss)
            watched.wait(0.02)
        except psutil.TimeoutExpired:
            continue
        except psutil.Error:
            break
    out, _ = proc.communicate(timeout=PATIENCE_S)
    assert json.loads(out)["outcome"] == "passed"
    assert peak < 150 * 1024 ** 2, "the doctor reached %d MB" % (peak // 1024 ** 2)


SIGCHLD_WHILE_LOCKED = textwrap.dedent("""\
    import os
    import signal

    import torch.utils.data  # noqa: F401  (the hooks patch the loaded DataLoader)
    from torch.utils.data._utils import signal_handling

    from doctor.agent import hooks

    hooks.install()
    # what torch's own SIGCHLD handler does in the main process
    signal.signal(signal.SIGCHLD, lambda *_: signal_handling._error_if_any_worker_fails())
    with hooks._lock:  # the main thread counting a batch, or reading exits at shutdown
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # SIGCHLD is pending now
        for _ in range(1000):  # the handler runs between these bytecodes
            pass
    os.waitpid(pid, 0)
    print("handled", flush=True)
""")


@needs.torch
def test_a_worker_exit_signalled_while_the_hooks_hold_their_lock_does_not_hang(tmp_path):
    """torch's SIGCHLD handler reads worker exits through the hooks; arriving while the
    main thread holds the hooks' lock it must not wait on that lock (a hung run after
    its last batch, seen under load)."""
    script = tmp_path / "sigchld_while_locked.py"
    script.write_text(SIGCHLD_WHILE_LOCKED)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
        + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    try:
        done = run_python([str(script)], env=env, capture_output=True, text=True,
                          timeout=PATIENCE_S)
    except subprocess.TimeoutExpired:
        pytest.fail("the SIGCHLD handler waited on the lock its own thread held")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "handled\n"


GETSTATE_COUNTED = textwrap.dedent("""\
    import os
    import torch
    from torch.utils.data import DataLoader, Dataset

    LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "getstate.log")


    class Counted(Dataset):
        def __init__(self):
            self.items = [torch.tensor([i]) for i in range(8)]

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return self.items[i]

        def __getstate__(self):
            with open(LOG, "a") as log:
                log.write("%d\\n" % os.getpid())
            return self.__dict__


    if __name__ == "__main__":
        loader = DataLoader(Counted(), batch_size=2, num_workers=2,
                            multiprocessing_context="spawn")
        print("total", sum(int(batch.sum()) for batch in loader))
""")


def test_a_side_effecting_getstate_runs_once_per_worker_as_without_the_doctor(tmp_path):
    """The probe's pickling of the dataset is reused by the first worker's real one: the
    user's ``__getstate__`` runs as often under the doctor as in the plain run."""
    (tmp_path / "train.py").write_text(GETSTATE_COUNTED)
    log = tmp_path / "getstate.log"
    plain = run_python(["train.py"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=PATIENCE_S)
    assert plain.returncode == 0 and "total 28" in plain.stdout, plain.stderr[-3000:]
    alone = log.read_text().splitlines()
    log.unlink()
    status, report, _out, err, left = run_doctor(["--json", "train.py"], tmp_path,
                                                 limit=PATIENCE_S)
    assert not left, left
    assert (status, report["outcome"]) == (0, "passed"), err[-3000:]
    assert "total 28" in err  # the script's own output passes through on stderr
    assert len(alone) == 2 and len(log.read_text().splitlines()) == len(alone)
    # the probe still measured what each worker receives
    assert [p["role"] for p in report["payload"]][:1] == ["dataset"]
