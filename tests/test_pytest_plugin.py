"""The dataloader_doctor fixture, used the way a user would, in real pytest runs.

Each run is a separate pytest process (pytester's subprocess mode) on a test module
that builds tiny DataLoaders and checks them in real worker processes.  A conftest in
that run watches, with psutil, every process the test process starts; the tests here
read what it saw: the workers really ran (as spawned children), and none was left
behind after any test, hanging ones included, nor after the run.
"""
import json
import re
import signal
import subprocess
import sys
import time

import psutil
import pytest

from flake8_dlworker.catalog import RULES
from tiers import popen_python, starts_torch

LOADERS = '''
import os
import time

import numpy as np
import torch
from torch.utils.data import Dataset, IterableDataset, get_worker_info


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


class Lambda:
    def __init__(self, lambd):
        self.lambd = lambd

    def __call__(self, x):
        return self.lambd(x)


def double(x):
    return 2 * x


class Squares(Dataset):
    def __init__(self, transform=None, **attrs):
        self.transform = transform
        self.__dict__.update(attrs)

    def __len__(self):
        return 8

    def __getitem__(self, i):
        x = torch.tensor(float(i * i))
        return self.transform(x) if self.transform else x


class Stream(IterableDataset):
    """Ignores get_worker_info(): every worker yields every sample."""

    def __iter__(self):
        return iter(range(8))


class ShardedStream(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        return iter(range(info.id, 8, info.num_workers))


class Noisy(Dataset):
    """Keeps its own generator: copied into every worker in the same state."""

    def __init__(self):
        self.rng = np.random.default_rng(0)

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return float(self.rng.random())


def reseed(worker_id):
    info = get_worker_info()
    info.dataset.rng = np.random.default_rng(info.seed)


class Stuck(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        open("stuck-%d" % os.getpid(), "w").close()  # tells a waiting test it got here
        time.sleep(600)  # the stuck frame
        return i


class Unrestorable(Dataset):
    """Pickles in the main process; its __setstate__ fails in the worker."""

    def __init__(self):
        self.path = "data"

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return i

    def __setstate__(self, state):
        raise ValueError("cannot reopen %s here" % state["path"])


class Broken(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return {"x": i}["missing"]  # the raising frame
'''

#: watches every process the test process starts, during and after each test
CONFTEST = '''
import json
import os
import threading

import psutil
import pytest

RECORD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "processes.jsonl")


def _descendants(me):
    found = {}
    own = " ".join(me.cmdline())
    for proc in me.children(recursive=True):
        try:
            cmdline = " ".join(proc.cmdline())
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
            if cmdline == own:
                continue  # forked and not yet exec'd (the fork server starting)
            if "multiprocessing.resource_tracker" in cmdline or (
                    "multiprocessing.forkserver import main" in cmdline
                    and proc.ppid() == me.pid):
                continue  # shared by every check; workers forked by the server stay
            found[str(proc.pid)] = [proc.create_time(), cmdline]
        except psutil.Error:
            continue
    return found


@pytest.fixture(autouse=True)
def watch_processes(request):
    me = psutil.Process()
    seen = {}
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            for pid, (created, cmdline) in _descendants(me).items():
                if cmdline or pid not in seen:  # empty while it starts or exits
                    seen[pid] = [created, cmdline or seen.get(pid, [0, ""])[1]]
            stop.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    yield
    stop.set()
    sampler.join()
    left = _descendants(me)
    with open(RECORD, "a") as f:
        f.write(json.dumps({"test": request.node.name, "seen": seen, "left": left}) + "\\n")
'''

SPAWN_TESTS = '''
import sqlite3
import threading

import psutil
import torch
from torch.utils.data import DataLoader

from loaders import (Broken, Compose, Lambda, Noisy, ShardedStream, Squares, Stream,
                     Stuck, Unrestorable, double, reseed)


def test_good_map_dataset(dataloader_doctor):
    loader = DataLoader(Squares(Compose([double])), batch_size=2, num_workers=2)
    report = dataloader_doctor.check(loader, batches=2)
    assert [b.tolist() for b in report.batches] == [[0.0, 2.0], [8.0, 18.0]]
    assert len(report.worker_pids) == 2
    assert report.start_method == "spawn"
    assert loader.multiprocessing_context is None  # the user's loader is unchanged
    assert loader.worker_init_fn is None


def test_good_sharded_stream_and_reseeded_rng(dataloader_doctor):
    report = dataloader_doctor.check(DataLoader(ShardedStream(), batch_size=2, num_workers=2))
    assert len(report.worker_pids) == 2
    report = dataloader_doctor.check(DataLoader(Noisy(), num_workers=2, worker_init_fn=reseed))
    assert len(report.worker_pids) == 2


def test_lambda_in_compose(dataloader_doctor):
    transform = Compose([double, Lambda(lambda x: x + 1)])  # the lambda
    dataloader_doctor.check(DataLoader(Squares(transform), num_workers=2))


def test_nested_collate(dataloader_doctor):
    def collate(batch):
        return batch

    dataloader_doctor.check(DataLoader(Squares(), num_workers=2, collate_fn=collate))


def test_open_file(dataloader_doctor, tmp_path):
    (tmp_path / "labels.txt").write_text("a")
    with open(tmp_path / "labels.txt") as labels:
        dataloader_doctor.check(DataLoader(Squares(labels=labels), num_workers=2))


def test_lock_in_a_list(dataloader_doctor):
    dataloader_doctor.check(DataLoader(Squares(locks=[1, threading.Lock()]), num_workers=2))


def test_sqlite_connection(dataloader_doctor):
    db = sqlite3.connect(":memory:")
    dataloader_doctor.check(DataLoader(Squares(db=db), num_workers=2))


def test_torch_generator(dataloader_doctor):
    gen = torch.Generator().manual_seed(0)
    dataloader_doctor.check(DataLoader(Squares(gen=gen), num_workers=2))


def test_unsharded_stream(dataloader_doctor):
    dataloader_doctor.check(DataLoader(Stream(), batch_size=2, num_workers=2))


def test_rng_on_dataset(dataloader_doctor):
    dataloader_doctor.check(DataLoader(Noisy(), num_workers=2))


def test_worker_raises(dataloader_doctor):
    dataloader_doctor.check(DataLoader(Broken(), num_workers=1))


def test_worker_cannot_unpickle(dataloader_doctor):
    dataloader_doctor.check(DataLoader(Unrestorable(), num_workers=1))


def test_worker_hangs(dataloader_doctor):
    dataloader_doctor.check(DataLoader(Stuck(), num_workers=1), timeout=TIMEOUT)


def test_torch_generator_under_fork(dataloader_doctor):
    gen = torch.Generator().manual_seed(0)
    dataloader_doctor.check(DataLoader(Squares(gen=gen), num_workers=2), start_method="fork")


def test_fork_pickles_nothing(dataloader_doctor):
    loader = DataLoader(Squares(Compose([Lambda(lambda x: x)])), num_workers=1)
    report = dataloader_doctor.check(loader, start_method="fork")
    assert report.start_method == "fork"
    # a forked worker may come and go between two samples of the watcher: ask psutil
    assert len(report.worker_pids) == 1
    assert not psutil.pid_exists(report.worker_pids[0]) or psutil.Process(
        report.worker_pids[0]).status() == psutil.STATUS_ZOMBIE
'''

#: long enough for a spawned worker to import torch on a loaded machine
HANG_TIMEOUT = 20

#: test -> (code, the culprit line[, start method]); None: the test passes
EXPECTED = {
    "test_good_map_dataset": None,
    "test_good_sharded_stream_and_reseeded_rng": None,
    "test_fork_pickles_nothing": None,
    "test_lambda_in_compose": (
        "DLW102", "dataset.transform.transforms[1].lambd: lambda defined at "
                  "test_loaders.py:{lambda} (DLW102)"),
    "test_nested_collate": (
        "DLW103", "collate_fn: function 'test_nested_collate.<locals>.collate' defined at "
                  "test_loaders.py:{collate} (DLW103)"),
    "test_open_file": (
        "DLW108", "dataset.labels: open file handle on '*labels.txt' (_io.TextIOWrapper) "
                  "(DLW108)"),
    "test_lock_in_a_list": ("DLW108", "dataset.locks[1]: lock (_thread.lock) (DLW108)"),
    "test_sqlite_connection": (
        "DLW108", "dataset.db: sqlite3 connection (sqlite3.Connection) (DLW108)"),
    "test_torch_generator": ("DLW108", "dataset.gen: torch.Generator (torch._C.Generator) "
                                       "(DLW108)"),
    "test_torch_generator_under_fork": (
        "DLW111", "dataset.gen: torch._C.Generator draws the same numbers in workers 0 and 1",
        "fork"),
    "test_unsharded_stream": (
        "DLW109", "dataset: worker 0 and worker 1 yielded the same first batch (Stream)"),
    "test_rng_on_dataset": (
        "DLW111", "dataset.rng: numpy.random._generator.Generator draws the same numbers "
                  "in workers 0 and 1"),
    "test_worker_raises": (
        "DLW205", "an exception raised in the loader's own code, in a worker"),
    "test_worker_cannot_unpickle": (
        None, "a worker failed while unpickling what the loader sent it (the dataset, "
              "collate_fn or worker_init_fn)"),
    "test_worker_hangs": (
        "DLW206", "the loader delivered no batch in %gs (waiting for batch 0)" % HANG_TIMEOUT),
}

#: the tests whose checks start spawned worker processes
STARTS_WORKERS = ("test_good_map_dataset", "test_good_sharded_stream_and_reseeded_rng",
                  "test_unsharded_stream", "test_rng_on_dataset", "test_worker_raises",
                  "test_worker_hangs")
#: its worker dies as it starts, maybe before the sampler sees it: no count is asserted
#: (its "exit code 1" in the report shows that a real worker ran)
DIES_AT_ONCE = ("test_worker_cannot_unpickle",)

#: the command line of a worker forked by the warm server (flake8_dlworker.warm_workers)
WARM_WORKER = "multiprocessing.forkserver import main"

HEADER = re.compile(r"^_{3,} (test_\w+) _{3,}$")


def _sections(lines):
    """The failure report of each failed test, by test name."""
    sections, name = {}, None
    for line in lines:
        match = HEADER.match(line)
        if match:
            name = match.group(1)
            sections[name] = []
        elif line.startswith("=" * 10) or line.startswith("-" * 10):
            name = None
        elif name is not None:
            sections[name].append(line)
    return sections


def _line_of(source, marker):
    return next(i for i, line in enumerate(source.splitlines(), 1) if marker in line)


@starts_torch
def _run_pytest(pytester, *args, **kwargs):
    """pytest in a subprocess on the project written there, whose tests start torch."""
    return pytester.runpytest_subprocess(*args, **kwargs)


def _write_project(pytester, tests):
    pytester.makepyfile(loaders=LOADERS, conftest=CONFTEST)
    return pytester.makepyfile(test_loaders=tests).read_text()


def _warm_workers(runner, runner_pid):
    """The workers the warm server forked under ``runner`` (not the server itself); a
    process that exits while it is read is skipped."""
    found = []
    for child in runner.children(recursive=True):
        try:
            if WARM_WORKER in " ".join(child.cmdline()) and child.ppid() != runner_pid:
                found.append(child)
        except psutil.Error:  # gone, or a zombie, since children() listed it
            continue
    return found


def _records(pytester):
    path = pytester.path / "processes.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _assert_no_process_left(records):
    for record in records:
        assert record["left"] == {}, "%s left %s" % (record["test"], record["left"])
    deadline = time.monotonic() + 120
    for record in records:  # and nothing outlived the pytest run
        for pid, (created, cmdline) in record["seen"].items():
            while True:
                try:
                    proc = psutil.Process(int(pid))
                    alive = (proc.create_time() == created
                             and proc.status() != psutil.STATUS_ZOMBIE)
                except psutil.NoSuchProcess:
                    alive = False
                if not alive:
                    break
                assert time.monotonic() < deadline, "%s outlived the run: %s" % (pid, cmdline)
                time.sleep(0.1)


def _check_failure(section, code, culprit, values, method="spawn"):
    text = "\n".join(section)
    assert "Traceback (most recent call last)" not in text
    if code is None:  # a failure the catalog has no cause for: said plainly, no code
        assert section[0] == "the DataLoader cannot run in worker processes (start method: " \
                             "%s)" % method, text
        assert section[1] == culprit, text
        assert not re.search(r"\bDLW\d{3}\b", text), text
        return
    rule = RULES[code]
    assert section[0] == "%s %s (start method: %s)" % (code, rule.title, method), text
    expected = culprit.format(**values)
    if "*" in expected:
        assert re.fullmatch(re.escape(expected).replace(r"\*", ".*"), section[1]), text
    else:
        assert section[1] == expected, text
    assert rule.explanation in text
    assert "fix: %s" % rule.fix_title in text


def test_spawn_checks_pass_and_fail_with_code_and_path(pytester):
    tests = _write_project(pytester, SPAWN_TESTS.replace("TIMEOUT", str(HANG_TIMEOUT)))
    started = time.monotonic()
    result = _run_pytest(pytester, "-p", "no:cacheprovider", timeout=400)
    elapsed = time.monotonic() - started
    failing = [name for name, expected in EXPECTED.items() if expected is not None]
    result.assert_outcomes(passed=len(EXPECTED) - len(failing), failed=len(failing))
    sections = _sections(result.stdout.lines)
    assert sorted(sections) == sorted(failing)
    values = {"lambda": _line_of(tests, "# the lambda"),
              "collate": _line_of(tests, "def collate(batch)")}
    for name in failing:
        _check_failure(sections[name], *EXPECTED[name][:2], values, *EXPECTED[name][2:])
    # evidence beyond the culprit line
    assert "next number in each of those workers: 0.6369616873214543" in sections[
        "test_rng_on_dataset"]
    assert "batch from worker 1: tensor([0, 1])" in sections["test_unsharded_stream"]
    loaders = (pytester.path / "loaders.py").read_text()
    assert "dataset class: Stream defined at loaders.py:%d" % _line_of(
        loaders, "class Stream(") in sections["test_unsharded_stream"]
    assert "dataset class: Noisy defined at loaders.py:%d" % _line_of(
        loaders, "class Noisy(") in sections["test_rng_on_dataset"]
    raised = "\n".join(sections["test_worker_raises"])
    assert "error: KeyError: 'missing'" in raised
    assert 'return {"x": i}["missing"]  # the raising frame' in raised
    stuck = "\n".join(sections["test_worker_hangs"])
    assert "stack of a stuck worker (most recent call first):" in stuck
    assert "in __getitem__" in stuck and "loaders.py" in stuck
    unpickle = "\n".join(sections["test_worker_cannot_unpickle"])
    assert "error: ValueError: cannot reopen data here" in unpickle
    assert "exit code 1" in unpickle
    assert elapsed < HANG_TIMEOUT + 300

    records = {r["test"]: r for r in _records(pytester)}
    assert sorted(records) == sorted(EXPECTED)
    for name, record in records.items():
        workers = record["seen"].values()
        if name in STARTS_WORKERS:  # real children, forked by the warm server
            # how many is for the report to say (worker_pids, asserted in the good tests;
            # the failing ones quote their workers): a sampler every 50 ms on a busy
            # machine may miss them all. Those it saw are the warm server's children.
            # A quick worker may be sampled only as it exits, when its command line is empty
            known = [cmd for _, cmd in workers if cmd]
            assert all(WARM_WORKER in cmd for cmd in known), (name, record)
        elif "fork" not in name and name not in DIES_AT_ONCE:
            # refused by the pickle probe before any worker started
            assert record["seen"] == {}, (name, record)
    _assert_no_process_left(records.values())


WARM_TESTS = '''
import os
import sys

import psutil
from torch.utils.data import DataLoader, Dataset

import loaders


class WhatTheWorkerSees(Dataset):
    def __len__(self):
        return 1

    def __getitem__(self, i):
        return {"mark": getattr(loaders, "MARK", "fresh"), "env": os.environ.get("DLW_ENV"),
                "parent": os.getppid(), "mp_main": "__mp_main__" in sys.modules}


def _seen(dataloader_doctor):
    report = dataloader_doctor.check(DataLoader(WhatTheWorkerSees(), batch_size=None,
                                                num_workers=1))
    return report.batches[0]


def test_state_of_the_tests_does_not_reach_the_workers(dataloader_doctor):
    loaders.MARK = "set in the test process"  # a forked worker would inherit it
    first, second = _seen(dataloader_doctor), _seen(dataloader_doctor)
    assert first["mark"] == second["mark"] == "fresh"
    assert first["mp_main"]  # prepared as spawn prepares a worker
    # both checks' workers were forked by the same server, not by this process
    assert first["parent"] == second["parent"] != os.getpid()
    assert "multiprocessing.forkserver import main" in " ".join(
        psutil.Process(first["parent"]).cmdline())


def test_environment_reaches_the_workers(dataloader_doctor, monkeypatch):
    monkeypatch.setenv("DLW_ENV", "set after the server started")
    assert _seen(dataloader_doctor)["env"] == "set after the server started"
'''


def test_warm_workers_start_clean_and_see_the_environment(pytester):
    _write_project(pytester, WARM_TESTS)
    result = _run_pytest(pytester, "-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(passed=2)
    _assert_no_process_left(_records(pytester))


#: what a worker says of itself: the proof of how it was started, which a sampler
#: every 50 ms on a busy machine could miss
WHO_RUNS = '''
import os

import psutil
from torch.utils.data import DataLoader, Dataset


class WhoRuns(Dataset):
    def __len__(self):
        return 1

    def __getitem__(self, i):
        return " ".join(psutil.Process().cmdline())


def worker_cmdline(dataloader_doctor):
    report = dataloader_doctor.check(DataLoader(WhoRuns(), batch_size=None, num_workers=1))
    assert len(report.worker_pids) == 1
    return report.batches[0]
'''

FRESH_TESTS = WHO_RUNS + '''
from loaders import Compose, Lambda, Squares, double


def test_good(dataloader_doctor):
    report = dataloader_doctor.check(DataLoader(Squares(Compose([double])), num_workers=1))
    assert report.start_method == "spawn" and len(report.worker_pids) == 1
    assert "multiprocessing.spawn import spawn_main" in worker_cmdline(dataloader_doctor)


def test_lambda(dataloader_doctor):
    dataloader_doctor.check(DataLoader(Squares(Lambda(lambda x: x)), num_workers=1))
'''


def test_fresh_workers_option_spawns_new_interpreters(pytester):
    _write_project(pytester, FRESH_TESTS)
    result = _run_pytest(pytester, "-p", "no:cacheprovider", "--dlw-fresh-workers",
                         timeout=300)
    result.assert_outcomes(passed=1, failed=1)
    section = _sections(result.stdout.lines)["test_lambda"]
    assert section[0] == "DLW102 %s (start method: spawn)" % RULES["DLW102"].title
    records = {r["test"]: r for r in _records(pytester)}
    known = [cmd for _, cmd in records["test_good"]["seen"].values() if cmd]
    assert all("multiprocessing.spawn import spawn_main" in cmd for cmd in known), known
    assert records["test_lambda"]["seen"] == {}
    _assert_no_process_left(records.values())


OVERRIDE_TESTS = WHO_RUNS + '''
from loaders import Compose, Lambda, Squares, double


def test_good_under_the_forced_method(dataloader_doctor):
    report = dataloader_doctor.check(DataLoader(Squares(Compose([double])), num_workers=1))
    assert report.start_method == "forkserver"
    assert len(report.worker_pids) == 1
    assert "multiprocessing.forkserver import main" in worker_cmdline(dataloader_doctor)


def test_fork_asked_but_forkserver_forced(dataloader_doctor):
    loader = DataLoader(Squares(Compose([Lambda(lambda x: x)])), num_workers=2)
    dataloader_doctor.check(loader, start_method="fork")
'''


def test_start_method_option_overrides_every_check(pytester):
    _write_project(pytester, OVERRIDE_TESTS)
    result = _run_pytest(pytester, "-p", "no:cacheprovider",
                         "--dlw-start-method", "forkserver", timeout=300)
    result.assert_outcomes(passed=1, failed=1)
    section = _sections(result.stdout.lines)["test_fork_asked_but_forkserver_forced"]
    assert section[0] == "DLW102 %s (start method: forkserver)" % RULES["DLW102"].title
    assert section[1].startswith("dataset.transform.transforms[0].lambd: lambda defined at")
    records = {r["test"]: r for r in _records(pytester)}
    assert len(records) == 2
    # the good check's workers were forked by the fork server, not spawned or forked here
    known = [cmd for _, cmd in records["test_good_under_the_forced_method"]["seen"].values()
             if cmd]
    assert all("multiprocessing.forkserver import main" in cmd for cmd in known), known
    assert records["test_fork_asked_but_forkserver_forced"]["seen"] == {}
    _assert_no_process_left(records.values())


XDIST_TESTS = '''
from torch.utils.data import DataLoader

from loaders import Compose, Lambda, Squares, double


def test_good(dataloader_doctor):
    report = dataloader_doctor.check(DataLoader(Squares(Compose([double])), num_workers=1))
    assert report.start_method == "forkserver"  # the option reached this xdist worker
    assert len(report.worker_pids) == 1


def test_lambda(dataloader_doctor):
    dataloader_doctor.check(DataLoader(Squares(Lambda(lambda x: x)), num_workers=1))
'''


LEN_HANGS = """
import time

from torch.utils.data import DataLoader, Dataset


class Endless(Dataset):
    def __len__(self):
        time.sleep(3600)  # never returns in time
        return 8

    def __getitem__(self, i):
        return i


def test_len_hangs(dataloader_doctor):
    dataloader_doctor.check(DataLoader(Endless(), num_workers=1), timeout=10)
"""


def test_a_hang_in_the_tests_own_code_is_no_worker_hang(pytester):
    """The dataset's ``__len__`` never returns: it runs in the test process (the sampler
    asks for it), so the check names that code and does not report a hung worker."""
    _write_project(pytester, LEN_HANGS)
    result = _run_pytest(pytester, "-p", "no:cacheprovider", timeout=400)
    text = result.stdout.str()
    assert result.ret == 1, text
    assert "the test process hangs in its own code, not in a DataLoader worker" in text, text
    assert re.search(r"test_loaders\.py:\d+: __len__\(\) did not return in 10s", text), text
    assert "DLW206" not in text, text


def test_works_under_xdist(pytester):
    pytest.importorskip("xdist")
    _write_project(pytester, XDIST_TESTS)
    result = _run_pytest(pytester, "-p", "no:cacheprovider", "-n", "2",
                         "--dlw-start-method", "forkserver", timeout=300)
    result.assert_outcomes(passed=1, failed=1)
    assert "DLW102 %s (start method: forkserver)" % RULES["DLW102"].title in result.stdout.str()
    records = _records(pytester)
    assert len(records) == 2
    _assert_no_process_left(records)


INTERRUPT_TESTS = '''
from torch.utils.data import DataLoader

from loaders import Stuck


def test_interrupted(dataloader_doctor):
    dataloader_doctor.check(DataLoader(Stuck(), num_workers=2), timeout=300)
'''


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or sys.platform == "win32",
                    reason="sends SIGINT to a POSIX process")
def test_ctrl_c_during_a_check_ends_its_workers(pytester):
    _write_project(pytester, INTERRUPT_TESTS)
    proc = popen_python(
        ["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_loaders.py"],
        cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as in a terminal
    try:
        runner = psutil.Process(proc.pid)
        deadline = time.monotonic() + 600  # a bound for a loaded machine, not a wait
        workers = []
        while len(workers) < 2 or len(list(pytester.path.glob("stuck-*"))) < 2:
            # both workers started, and both are inside __getitem__
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.2)
            workers = _warm_workers(runner, proc.pid)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "KeyboardInterrupt" in out
    gone, alive = psutil.wait_procs(workers, timeout=120)
    assert alive == [], out
