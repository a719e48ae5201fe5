"""pytest plugin (entry point ``pytest11``): the ``dataloader_doctor`` fixture.

::

    def test_loader_runs_in_spawned_workers(dataloader_doctor):
        dataloader_doctor.check(make_loader(), start_method="spawn")

``check`` first pickles what the loader sends to each worker, as spawn does
(``flake8_dlworker.testing``), then runs a copy of the loader with the start
method forced, in real worker processes, for ``batches`` batches.  A failure
fails the test with the catalog code, the plain explanation and the path of the
object at fault, never with a multiprocessing traceback.  It also reports an
``IterableDataset`` whose workers yield the same samples (DLW109) and random
generators on the dataset that draw the same numbers in every worker (DLW111).
The workers are always ended, and checked to be gone, before ``check`` returns.

Spawn workers come from one warm interpreter per test process
(``flake8_dlworker.warm_workers``): it has imported torch, forks each worker, and the
worker then prepares and unpickles exactly as a spawned one.  ``--dlw-fresh-workers``
spawns new interpreters instead; ``--dlw-start-method`` runs every ``check`` under
another start method.
Importing this module imports neither torch nor psutil: pytest loads it in
every session of an environment where the package is installed.
"""
import os
import re
import signal
import sys
import sysconfig
import tempfile
import threading
import time
import warnings

import pytest

from flake8_dlworker import catalog, platforms
from flake8_dlworker.assignments import is_users

START_METHODS = ("spawn", "forkserver", "fork")

#: grace given to workers asked to stop before they are killed, in seconds
_GRACE = 3.0
#: the longest message part kept from a worker's own error output
_TAIL_LINES = 8


def pytest_addoption(parser):
    group = parser.getgroup("dlworker", "DataLoader worker checks (flake8-dlworker)")
    group.addoption(
        "--dlw-start-method", dest="dlw_start_method", choices=START_METHODS, default=None,
        help="run every dataloader_doctor.check under this start method, whatever the "
             "test asks (spawn: Windows and macOS; forkserver: Linux from Python 3.14)")
    group.addoption(
        "--dlw-fresh-workers", dest="dlw_fresh_workers", action="store_true",
        help="start every spawn check's workers as new interpreters that import torch "
             "themselves (slower); by default they are forked from one interpreter that "
             "has imported torch and nothing of the tests, then prepared as spawn prepares "
             "them")


@pytest.fixture
def dataloader_doctor(request):
    """Runs DataLoaders in real worker processes: ``dataloader_doctor.check(loader)``."""
    return DataLoaderDoctor(request.config.getoption("dlw_start_method"),
                            fresh_workers=request.config.getoption("dlw_fresh_workers"))


class CheckReport:
    """What a passing ``check`` saw."""

    def __init__(self, start_method, batches, worker_pids, worker_stderr):
        self.start_method = start_method
        self.batches = batches            # the batches the copy of the loader delivered
        self.worker_pids = worker_pids    # every worker process it started, all ended
        self.worker_stderr = worker_stderr

    def __repr__(self):
        return "CheckReport(start_method=%r, batches=%d, worker_pids=%r)" % (
            self.start_method, len(self.batches), self.worker_pids)


class DataLoaderDoctor:
    def __init__(self, forced_start_method=None, fresh_workers=False):
        self.forced_start_method = forced_start_method
        self.fresh_workers = fresh_workers

    def check(self, loader, start_method="spawn", batches=1, timeout=60):
        """Run ``batches`` batches of a copy of ``loader`` in ``start_method`` workers.

        Fails the test, naming the cause, when the loader cannot run there; returns
        a ``CheckReport`` when it can.  ``loader`` itself is not changed.  For an
        ``IterableDataset`` with several workers it takes at least two batches from
        each worker, to compare them (DLW109).  ``timeout`` bounds the whole check,
        starting the workers included; ``--dlw-start-method`` overrides
        ``start_method``.
        """
        from torch.utils.data import DataLoader

        if not isinstance(loader, DataLoader):
            raise TypeError("dataloader_doctor.check takes a torch.utils.data.DataLoader, "
                            "not %s" % type(loader).__name__)
        method = self.forced_start_method or start_method
        if method not in START_METHODS:
            raise ValueError("start_method must be one of %s, not %r"
                             % (", ".join(START_METHODS), method))
        import multiprocessing

        if method not in multiprocessing.get_all_start_methods():
            pytest.skip("start method %r is not available on this platform" % method)
        warm = method == "spawn" and not self.fresh_workers and _warm_server() is not None
        problem, report = _Check(loader, method, batches, timeout, warm).run()
        if problem is not None:
            pytest.fail(problem, pytrace=False)
        return report


class _Timeout(BaseException):
    """Raised in the main thread when a check runs past its time (not an Exception:
    torch's data loop catches those)."""


class _Problem(Exception):
    def __init__(self, code, subject, detail, evidence=(), head=None):
        super().__init__(subject)
        self.code = code          # catalog code or None
        self.subject = subject    # "path: what" line
        self.detail = detail      # the error, one line
        self.evidence = list(evidence)
        self.head = head          # the first line, when it is no catalog cause


class _Check:
    def __init__(self, loader, method, batches, timeout, warm=False):
        self.loader = loader
        self.method = method
        self.warm = warm  # spawn workers forked from the warm server (warm_workers)
        self.batches = max(1, int(batches))
        self.timeout = float(timeout)
        self.deadline = time.monotonic() + self.timeout
        self.stderr_file = None
        self.worker_pids = []
        self.exit_codes = {}  # pid -> exit code of the workers dead before they were ended
        self.timed_out = False
        self.hung_in = None  # the test's own code the main thread hung in (_own_code)
        self.phase = "starting the workers"

    # -- the whole check ----------------------------------------------------------
    def run(self):
        loader = self.loader
        if loader.num_workers == 0:
            warnings.warn("dataloader_doctor.check: num_workers=0 runs no worker process; "
                          "nothing of the loader is sent to %s workers" % self.method,
                          stacklevel=3)
            got = _take(iter(loader), self.batches)
            return None, CheckReport(self.method, got, [], "")
        try:
            if self.method != "fork":
                # the first worker's real pickling reuses what the probe's got from the
                # user's own __getstate__: it runs once per worker, as without the check
                with self._probe_pickling().reused_by_next_worker():
                    got = self._run_workers()
            else:
                got = self._run_workers()
        except _Problem as problem:
            return self._message(problem), None
        text = self._stderr_text()
        if text:
            sys.stderr.write(text)  # what the workers printed, shown with the test's output
        return None, CheckReport(self.method, got, self.worker_pids, text)

    def _probe_pickling(self):
        from flake8_dlworker.testing import KeptReductions, loader_payload, measure

        kept = KeptReductions()
        for name, obj in loader_payload(self.loader):
            culprit = measure(obj, name, kept=kept)[0]
            if culprit is not None:
                raise _Problem(culprit.code, str(culprit), culprit.error,
                               [line for line in [culprit.kept_at()] if line])
        return kept

    def _message(self, problem):
        from flake8_dlworker.catalog import RULES

        rule = RULES.get(problem.code) if problem.code else None
        head = ("%s %s" % (rule.code, rule.title) if rule
                else problem.head or "the DataLoader cannot run in worker processes")
        lines = ["%s (start method: %s)" % (head, self.method), problem.subject]
        if problem.detail:
            lines.append("error: %s" % problem.detail)
        lines += problem.evidence
        if rule:
            lines += [rule.explanation, "fix: %s" % rule.fix_title]
        return "\n".join(lines)

    # -- the loader in real workers -------------------------------------------------
    def _run_workers(self):
        import copy
        import multiprocessing

        from flake8_dlworker.testing import WorkerRandomProbe

        if self.warm:
            from flake8_dlworker.warm_workers import WarmContext, start

            start()  # once per session: not charged to this check's timeout
            self.deadline = time.monotonic() + self.timeout
            ctx = WarmContext()
        else:
            ctx = multiprocessing.get_context(self.method)
        if self.method == "forkserver":
            # started now, not while stderr is redirected below
            from multiprocessing import forkserver

            forkserver.ensure_running()
        runner = copy.copy(self.loader)  # shares dataset, sampler, collate_fn: as the user's
        runner._iterator = None
        runner.multiprocessing_context = ctx
        draws = ctx.Queue()
        self.stack_dir = tempfile.mkdtemp(prefix="dlw-check-")
        runner.worker_init_fn = WorkerRandomProbe(
            self.loader.worker_init_fn, draws, os.path.join(self.stack_dir, "stacks.txt"))
        before = _Processes()
        iterator = None
        got = []
        finished = False  # every batch taken: the workers may stop in their own time
        try:
            with _Deadline(self) as deadline:
                with self._capture_worker_stderr():
                    iterator = iter(runner)
                self.worker_pids = [w.pid for w in getattr(iterator, "_workers", ())]
                wanted = self._wanted()
                for index in range(wanted):
                    self.phase = "waiting for batch %d" % index
                    try:
                        got.append(next(iterator))
                    except StopIteration:
                        break
                self.phase = "reading what the workers drew"
                reports = _receive(draws, len(self.worker_pids), deadline)
            finished = True
        except _Timeout:
            self.timed_out = True
            error = None
        except Exception as exc:  # every failure of the loader is explained below
            error = exc
        else:
            error = None
        finally:
            # after a failure, a timeout or Ctrl-C the workers are stopped at once
            left = self._end_workers(iterator, before, failed=not finished)
            draws.close()
            draws.join_thread()
            self._stderr_text()  # complete now that the workers are gone
            self.stacks = self._read_stacks()
        if self.timed_out and self.hung_in is not None:
            path, line, func = self.hung_in
            raise _Problem(None, "%s:%d: %s() did not return in %gs (%s)" % (
                path, line, func, self.timeout, self.phase), None,
                head="the test process hangs in its own code, not in a DataLoader worker")
        if self.timed_out:
            raise _Problem("DLW206", "the loader delivered no batch in %gs (%s)"
                           % (self.timeout, self.phase), None, self._stacks())
        if error is not None:
            raise self._explain(error)
        if left:
            raise _Problem(None, "worker processes left running after the loader was ended: "
                           "%s" % ", ".join(map(str, left)), None)
        self._check_sharding(got)
        self._check_random(reports)
        return got[:self.batches]

    def _wanted(self):
        """Batches to take: ``batches``, and for DLW109 two from every worker."""
        from torch.utils.data import IterableDataset

        workers = self.loader.num_workers
        if (isinstance(self.loader.dataset, IterableDataset) and workers >= 2
                and getattr(self.loader, "in_order", True)):
            return max(self.batches, 2 * workers)
        return self.batches

    def _capture_worker_stderr(self):
        return _ServerStderr(self) if self.warm else _WorkerStderr(self)

    def _stderr_text(self):
        if self.stderr_file is None:
            return getattr(self, "_stderr_cache", "")
        self.stderr_file.seek(0)
        text = self.stderr_file.read().decode("utf-8", "replace")
        self.stderr_file.close()
        self.stderr_file = None
        self._stderr_cache = text
        return text

    def _worker_tail(self):
        errors = _error_lines(self._stderr_text().replace("\0", ""))
        return ["worker stderr:"] + ["  " + line for line in errors] if errors else []

    # -- ending the workers ------------------------------------------------------------
    def _end_workers(self, iterator, before, failed):
        """Stop every process the check started; return the pids still alive after."""
        with _QuietSIGCHLD():
            procs = list(getattr(iterator, "_workers", ()))
            procs += [p for p in before.new_workers() if p not in procs]
            for proc in procs:
                code = proc.exitcode
                if code is not None:
                    self.exit_codes[proc.pid] = code
            if self.timed_out:
                _dump_stacks(procs)
            if failed:
                for proc in procs:  # a stuck worker would make each join wait 5 s
                    _ignore(proc.terminate)
            if iterator is not None and hasattr(iterator, "_shutdown_workers"):
                _ignore(iterator._shutdown_workers)
            for proc in procs:
                proc.join(_GRACE)
                if proc.is_alive():
                    _ignore(proc.kill)
                    proc.join(_GRACE)
            self.worker_pids = sorted(set(self.worker_pids) | {p.pid for p in procs})
        return before.sweep(self.worker_pids)

    # -- what the batches and the workers' generators say --------------------------------
    def _check_sharding(self, got):
        workers = self.loader.num_workers
        if (not self._is_iterable() or workers < 2 or len(got) < workers
                or not getattr(self.loader, "in_order", True)):
            return
        # in order, batch i comes from worker i % num_workers while none is exhausted
        first = got[0]
        second = got[workers] if len(got) > workers else None
        if second is not None and _same(first, second):
            return  # a constant stream: duplicates cannot be told from equal samples
        for worker in range(1, workers):
            if _same(first, got[worker]):
                raise _Problem(
                    "DLW109", "dataset: worker 0 and worker %d yielded the same first batch "
                    "(%s)" % (worker, type(self.loader.dataset).__name__),
                    None, ["batch from worker 0: %s" % _short(first),
                           "batch from worker %d: %s" % (worker, _short(got[worker])),
                           "dataset class: %s" % _site(type(self.loader.dataset))])

    def _exits(self):
        return ["worker pid %d: %s" % (pid, "killed by signal %d (%s)" % (
            -code, _signal_text(-code)) if code < 0 else "exit code %d" % code)
            for pid, code in sorted(self.exit_codes.items()) if code != 0]

    def _read_stacks(self):
        import shutil

        path = os.path.join(self.stack_dir, "stacks.txt")
        try:
            with open(path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""
        finally:
            shutil.rmtree(self.stack_dir, ignore_errors=True)

    def _stacks(self):
        """The stuck worker's stack, as faulthandler wrote it, the user's frame first."""
        lines = self.stacks.replace("\0", "").splitlines()
        # the signal is handled in the worker's main thread: "Current thread" is its stack
        starts = [i for i, line in enumerate(lines) if line.startswith("Current thread")]
        out = []
        for start in starts[:1]:
            frames = []
            for frame in lines[start + 1:]:
                if not frame.startswith("  File "):
                    break
                frames.append(frame)
            if frames:
                # the loader's own frames, down to where torch's worker loop called them
                own = [f for f in frames if not _library_frame(f)] or frames[:3]
                out = ["stack of a stuck worker (most recent call first):"]
                out += own[:_TAIL_LINES]
        return out or self._worker_tail()

    def _is_iterable(self):
        from torch.utils.data import IterableDataset

        return isinstance(self.loader.dataset, IterableDataset)

    def _check_random(self, reports):
        by_path = {}
        for worker_id, _pid, draws in reports:
            for path, type_name, number in draws:
                if path == "<probe>":
                    continue
                by_path.setdefault((path, type_name), []).append((worker_id, number))
        for (path, type_name), seen in sorted(by_path.items()):
            numbers = {}
            for worker_id, number in sorted(seen):
                numbers.setdefault(number, []).append(worker_id)
            for number, workers in numbers.items():
                if len(workers) >= 2:
                    raise _Problem(
                        "DLW111", "%s: %s draws the same numbers in workers %s" % (
                            path, type_name, " and ".join(map(str, workers))),
                        None, ["next number in each of those workers: %r" % (number,),
                               "dataset class: %s" % _site(type(self.loader.dataset))])

    # -- a failure of the loader, named --------------------------------------------------
    def _explain(self, exc):
        text = _chain_text(exc)
        if "Caught " in text and "in DataLoader worker process" in text:
            return _Problem("DLW205", "an exception raised in the loader's own code, in a worker",
                            _last_line_of_text(str(exc)), _original_frames(str(exc)))
        stderr = self._stderr_text().replace("\0", "")
        text += "".join("\nkilled by signal: %s" % _signal_text(-code)
                        for code in self.exit_codes.values() if code < 0)
        errors = _error_lines(stderr)
        evidence = self._exits()
        if errors:
            evidence += ["worker stderr:"] + ["  " + line for line in errors]
        last = _last_line(exc)
        # the worker's own error says more than the main process's "exited unexpectedly"
        child = errors[-1] if errors else last
        for code, needles, where, subject in _causes():
            haystack = text if where == "main" else stderr
            if any(needle in haystack for needle in needles):
                return _Problem(code, subject, last if where == "main" else child, evidence)
        if _MAIN_LOOKUP.search(stderr):
            return _Problem("DLW104", "a worker could not find a definition the loader needs in "
                            "its __main__", child, evidence)
        if "No module named" in stderr:
            return _Problem(None, "a worker could not import a module the loader needs (is it "
                            "importable from sys.path in a fresh process?)", child, evidence)
        if "pickle.load(from_parent)" in stderr:
            return _Problem(None, "a worker failed while unpickling what the loader sent it "
                            "(the dataset, collate_fn or worker_init_fn)", child, evidence)
        if self.method != "fork" and "pickl" in text.lower():
            return _Problem(None, "the worker's arguments could not be pickled", last, evidence)
        return _Problem(None, "the loader failed in %s workers" % self.method, child, evidence)


def _causes():
    """(code, texts, where they are printed, what to say), from the catalog's records
    (``pytest_texts``, ``pytest_reads``, ``pytest_says``): the first that matches names
    the cause; the main process's error is read before a worker's stderr."""
    found = [(code, rule.texts("pytest_texts"), rule.field("pytest_reads"),
              rule.field("pytest_says")) for code, rule in catalog.RULES.items()
             if rule.texts("pytest_texts")]
    return sorted(found, key=lambda cause: (cause[2] != "main", cause[0]))


_MAIN_LOOKUP = re.compile(r"Can't get attribute|module '__(mp_)?main__' has no attribute")


class _WorkerStderr:
    """Points file descriptor 2 at a file while the workers start: they keep it.

    The main process's own writes in that short window go there too and are shown
    with the workers' output.  forkserver workers inherit the server's stderr.
    """

    def __init__(self, check):
        self.check = check
        self.saved = None

    def __enter__(self):
        try:
            sys.stderr.flush()
        except Exception:
            pass
        try:
            self.check.stderr_file = tempfile.TemporaryFile()
            self.saved = os.dup(2)
            os.dup2(self.check.stderr_file.fileno(), 2)
        except OSError:
            self.saved = None
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            os.dup2(self.saved, 2)
            os.close(self.saved)
        return False


class _ServerStderr:
    """For warm workers: what the warm server's stderr gained since the workers started.

    Stands in for ``_WorkerStderr``'s file: ``seek(0)`` and ``read()`` give that part.
    """

    def __init__(self, check):
        self.check = check
        self.server = _warm_server()
        self.start = None

    def __enter__(self):
        self.start = self.server.log_size()
        self.check.stderr_file = self
        return self

    def __exit__(self, *exc):
        return False

    def seek(self, offset):
        pass

    def read(self):
        return self.server.log_since(self.start)

    def close(self):
        pass


def _warm_server():
    """The warm fork server (flake8_dlworker.warm_workers), or None where there is none."""
    try:
        from flake8_dlworker import warm_workers
    except ImportError:  # no file descriptor passing (Windows)
        return None
    return warm_workers.server()


class _Deadline:
    """Interrupts the main thread when the check's time is up (SIGALRM), or, where that
    is not possible, ends the workers from a watchdog thread so the loader fails."""

    def __init__(self, check):
        self.check = check
        self.alarm = None
        self.watchdog = None
        self.stop = threading.Event()

    def remaining(self):
        return max(0.0, self.check.deadline - time.monotonic())

    def __enter__(self):
        def on_alarm(signum, frame):
            self.check.hung_in = _own_code(frame)
            raise _Timeout()

        # no alarm on Windows, off the main thread, or while pytest-timeout holds it
        self.alarm = platforms.start_alarm(self.remaining(), on_alarm)
        if self.alarm is None:
            self.watchdog = threading.Thread(target=self._watch, daemon=True)
            self.watchdog.start()
        return self

    def _watch(self):
        if not self.stop.wait(self.remaining()):
            self.check.timed_out = True
            import multiprocessing

            for proc in multiprocessing.active_children():
                if proc.pid in self.check.worker_pids:
                    _ignore(proc.kill)

    def __exit__(self, *exc):
        if self.alarm is not None:
            platforms.cancel_alarm(self.alarm)
        self.stop.set()
        if exc[0] is not None and issubclass(exc[0], Exception) and self.check.timed_out:
            raise _Timeout()  # the watchdog ended the workers: that is the failure
        return False


def _own_code(frame):
    """(path, line, function) of the test's own code when the main thread was running it
    (a dataset's ``__len__`` that never returns, say), or None when it was waiting in
    torch or in this plugin (for a worker): the innermost frame outside the standard
    library decides."""
    library = tuple(os.path.join(os.path.realpath(p), "") for p in {
        sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})
    own = os.path.join(os.path.dirname(os.path.realpath(__file__)), "")
    while frame is not None:
        path = os.path.realpath(frame.f_code.co_filename)
        if not path.startswith(library):
            if path.startswith(own) or not is_users(path):  # in an installed package
                return None
            return path, frame.f_lineno, frame.f_code.co_name
        frame = frame.f_back
    return None


class _QuietSIGCHLD:
    """Holds torch's SIGCHLD handler while workers are ended on purpose.

    torch raises "worker ... killed by signal" from it in the main thread; ending a
    stuck worker must not raise in the middle of the cleanup.  The iterator's
    shutdown unregisters its workers before the handler comes back.
    """

    def __enter__(self):
        self.saved = platforms.default_child_signal()
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            platforms.restore_child_signal(self.saved)
        return False


class _Processes:
    """The processes that exist before the check, to tell the ones it started."""

    def __init__(self):
        import multiprocessing

        import psutil

        self.children = set(multiprocessing.active_children())
        self.me = psutil.Process()
        self.pids = {p.pid for p in self.me.children(recursive=True)}

    def new_workers(self):
        import multiprocessing

        return [p for p in multiprocessing.active_children() if p not in self.children]

    def sweep(self, worker_pids):
        """Kill what is left of the check's processes; return the pids that stay alive."""
        import psutil

        left = []
        for proc in self._new_descendants(worker_pids):
            _ignore(proc.kill)
            left.append(proc)
        gone, alive = psutil.wait_procs(left, timeout=_GRACE)
        return sorted(p.pid for p in alive if _running(p))

    def _new_descendants(self, worker_pids):
        import psutil

        found = []
        for pid in worker_pids:  # forkserver workers are the server's children
            try:
                found.append(psutil.Process(pid))
            except psutil.Error:
                pass
        try:
            found += [p for p in self.me.children(recursive=True) if p.pid not in self.pids]
        except psutil.Error:
            pass
        result, seen = [], set()
        for proc in found:
            if proc.pid in seen or not _running(proc) or _infrastructure(proc):
                continue
            seen.add(proc.pid)
            result.append(proc)
        return result


def _signal_text(number):
    """The words torch's SIGCHLD handler uses for a signal: strsignal's."""
    try:
        return signal.strsignal(number) or str(number)
    except (ValueError, AttributeError):
        return str(number)


def _dump_stacks(procs):
    """Ask each live worker for its stack (WorkerRandomProbe registered SIGUSR1)."""
    asked = False
    for proc in procs:
        if proc.is_alive():
            asked = platforms.ask_pid_for_stacks(proc.pid, platforms.TEST_DUMP_SIGNAL) or asked
    if asked:
        time.sleep(0.5)  # faulthandler writes from the signal handler, at once


def _running(proc):
    import psutil

    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _infrastructure(proc):
    """multiprocessing's resource tracker and fork server: shared, they outlive a check.

    Workers forked by the fork server carry its command line; the server itself is
    the one whose parent is this process.
    """
    import psutil

    try:
        cmdline = " ".join(proc.cmdline())
        if "multiprocessing.resource_tracker" in cmdline:
            return True
        return ("multiprocessing.forkserver import main" in cmdline
                and proc.ppid() == os.getpid())
    except psutil.Error:
        return False


def _ignore(action):
    try:
        action()
    except Exception:
        pass


def _take(iterator, count):
    got = []
    for _ in range(count):
        try:
            got.append(next(iterator))
        except StopIteration:
            break
    return got


def _receive(queue, count, deadline):
    """The probes' reports from ``count`` workers, or as many as arrive in time."""
    import queue as queue_module

    reports = []
    while len(reports) < count:
        try:
            reports.append(queue.get(timeout=min(deadline.remaining(), 10.0)))
        except queue_module.Empty:
            break
    return reports


def _same(a, b):
    """Deep equality of two batches: tensors, arrays, mappings, sequences, plain values."""
    if type(a) is not type(b):
        return False
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(a, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a, b))
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(a, numpy.ndarray):
        return a.shape == b.shape and bool(numpy.array_equal(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except Exception:
        return False


def _error_lines(text):
    """The error lines a worker printed, without traceback frames: the last few."""
    lines = [line.rstrip() for line in text.splitlines()]
    kept = [line for line in lines if line.strip() and not line.startswith((" ", "\t"))
            and not line.startswith("Traceback (most recent call last)")
            and not line.startswith(("Thread 0x", "Current thread", "Extension modules"))]
    return kept[-_TAIL_LINES:]


def _site(cls):
    from flake8_dlworker.testing import class_site

    try:
        return class_site(cls)
    except Exception:  # a class without a findable source: its name
        return cls.__qualname__


def _short(value, limit=120):
    text = repr(value).replace("\n", " ")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _chain_text(exc):
    parts, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        parts.append("%s: %s" % (type(exc).__name__, exc))
        exc = exc.__cause__ or exc.__context__
    return "\n".join(parts)


def _last_line(exc):
    return "%s: %s" % (type(exc).__name__, _last_line_of_text(str(exc)))


def _last_line_of_text(text):
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else text


def _library_frame(line):
    """A traceback line inside torch's data loading or multiprocessing, not user code."""
    path = line.replace("\\", "/")
    return any(part in path for part in _LIBRARY_PARTS)


_LIBRARY_PARTS = ("/torch/utils/data/", "/multiprocessing/", "/threading.py", '"<string>"',
                  "/flake8_dlworker/testing.py")  # the probe around the worker_init_fn


def _original_frames(text):
    """The user's frames from a worker's "Original Traceback", without torch's own."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("Original Traceback"))
    except StopIteration:
        return []
    frames = lines[start + 1:]
    kept = []
    skip = False
    for line in frames:
        if line.startswith('  File "'):
            skip = _library_frame(line)
        if not skip:
            kept.append(line)
    return ["worker traceback (the loader's code):"] + kept[-_TAIL_LINES:]
