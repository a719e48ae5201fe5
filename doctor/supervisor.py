"""Start the target, watch its whole process tree, always end it, collect evidence.

The target runs in its own session under ``doctor.agent.boot``; the doctor becomes
the child subreaper (Linux), so workers orphaned by a dying main process are still
ours to see and to end.  psutil samples every process of the tree (RSS, host
memory); the target's stdout and stderr pass through live and are kept; the
agent's events arrive in a JSON-lines file.
"""
import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import psutil

from doctor import status
from doctor.agent import EVENTS, MAX_BATCHES, START_METHOD
from doctor.agent.worker import DUMP_SIGNAL
from doctor.evidence import Evidence, WorkerExit, read_events
from doctor.logparse import LogParser
from flake8_dlworker import host

SAMPLE_S = 0.05
_GIB = 1024 ** 3
_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    """Orphaned descendants get re-parented to us instead of init (Linux only)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


class Run:
    """One run of the target; :meth:`run` returns its :class:`Evidence`."""

    def __init__(self, target, start_method="spawn", timeout=None, max_batches=None,
                 stdout=None, show_status=False):
        self.target = list(target)          # [SCRIPT, *ARGS] or ["-m", MODULE, *ARGS]
        self.start_method = start_method
        self.timeout = timeout
        self.max_batches = max_batches
        self.stdout = stdout or sys.stdout  # where the script's stdout goes
        self.status = status.StatusLine(sys.stderr) if show_status else None
        self.parser = LogParser()
        self._parser_lock = threading.Lock()
        self.peak_rss = {}                  # pid -> bytes
        self.rss_series = {}                # pid -> [(seconds, bytes)] as RSS changed
        self.started = None
        self.last_available = {}            # pid -> host bytes available when last seen
        self.seen = {}                      # pid -> psutil.Process (create time pinned)
        self.proc = None

    # -- the run ----------------------------------------------------------------------
    def run(self):
        become_subreaper()
        with tempfile.TemporaryDirectory(prefix="dlw-doctor-") as tmp:
            events_path = os.path.join(tmp, "events.jsonl")
            env = dict(os.environ)
            env.update({EVENTS: events_path, START_METHOD: self.start_method,
                        "PYTHONFAULTHANDLER": "1", "PYTHONUNBUFFERED": "1"})
            if self.max_batches:
                env[MAX_BATCHES] = str(self.max_batches)
            started = self.started = time.monotonic()
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "doctor.agent.boot", *self.target],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                env=env, start_new_session=True)
            readers = [
                threading.Thread(target=self._pump, args=(self.proc.stdout, self.stdout, False),
                                 daemon=True),
                threading.Thread(target=self._pump, args=(self.proc.stderr, sys.stderr, True),
                                 daemon=True),
            ]
            for reader in readers:
                reader.start()
            outcome = None
            try:
                outcome = self._watch(started, events_path)
            except KeyboardInterrupt:
                self._ask_for_stacks(events_path)
                outcome = "stopped"
            finally:
                self._end_tree()
                for reader in readers:
                    reader.join(timeout=5)
                if self.status:
                    self.status.clear()
            events = read_events(events_path)
            dumps = _stack_dumps(tmp)
        ev = self._evidence(outcome, events, time.monotonic() - started)
        ev.stacks.extend(dumps)
        return ev

    def _watch(self, started, events_path):
        """Sample until the main process exits or the time is up."""
        deadline = started + self.timeout if self.timeout else None
        batches = {}
        offset = 0
        while True:
            self._sample()
            if self.status:
                offset = self._read_batches(events_path, offset, batches)
                self.status.show(time.monotonic() - started, self._alive(),
                                 self._peak_worker_gb(), sum(batches.values()))
            if self.proc.poll() is not None:
                return None
            if deadline is not None and time.monotonic() >= deadline:
                self._ask_for_stacks(events_path)
                return "timeout"
            time.sleep(SAMPLE_S)

    @staticmethod
    def _read_batches(path, offset, batches):
        """Batches delivered per loader, from the events written since ``offset``."""
        try:
            with open(path, "rb") as handle:
                handle.seek(offset)
                chunk = handle.read()
        except OSError:
            return offset
        end = chunk.rfind(b"\n") + 1
        for line in chunk[:end].splitlines():
            if b'"batch"' in line:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                batches[event.get("key")] = event.get("n", 0)
        return offset + end

    def _pump(self, stream, echo, parse):
        """Copy one output stream through, live, and feed stderr to the parser."""
        for raw in iter(stream.readline, b""):
            text = raw.decode("utf-8", errors="replace")
            if self.status:
                self.status.clear()
            try:
                echo.write(text)
                echo.flush()
            except (OSError, ValueError):
                pass
            if parse:
                with self._parser_lock:
                    self.parser.feed(text)
        stream.close()

    # -- the process tree -------------------------------------------------------------
    def _tree(self):
        procs = []
        try:
            root = psutil.Process(self.proc.pid)
            procs.append(root)
            procs.extend(root.children(recursive=True))
        except psutil.Error:
            pass
        try:  # orphans re-parented to us (subreaper)
            procs.extend(p for p in psutil.Process().children(recursive=True)
                         if p.pid != self.proc.pid and p.pid not in {q.pid for q in procs})
        except psutil.Error:
            pass
        return procs

    def _sample(self):
        try:
            available = psutil.virtual_memory().available
        except psutil.Error:
            available = None
        for proc in self._tree():
            self.seen.setdefault(proc.pid, proc)
            try:
                rss = proc.memory_info().rss
            except psutil.Error:
                continue
            if not rss:  # a zombie: nothing left to measure
                continue
            if rss > self.peak_rss.get(proc.pid, 0):
                self.peak_rss[proc.pid] = rss
            series = self.rss_series.setdefault(proc.pid, [])
            if not series or abs(rss - series[-1][1]) > 0.1 * series[-1][1]:
                series.append((time.monotonic() - (self.started or 0), rss))
            self.last_available[proc.pid] = available

    def _alive(self):
        return sum(1 for p in self.seen.values() if _running(p))

    def _peak_worker_gb(self):
        others = [v for pid, v in self.peak_rss.items() if pid != self.proc.pid]
        return max(others) / _GIB if others else 0.0

    def _ask_for_stacks(self, events_path):
        """SIGUSR2 to every process that registered a stack dump, then a moment to print."""
        if DUMP_SIGNAL is None:
            return
        registered = {e["pid"] for e in read_events(events_path)
                      if e.get("event") in ("main_start", "worker_start")}
        asked = False
        for pid in registered:
            proc = self.seen.get(pid)
            if proc is not None and _running(proc):
                try:
                    proc.send_signal(DUMP_SIGNAL)
                    asked = True
                except psutil.Error:
                    pass
        if asked:
            time.sleep(1.0)

    def _end_tree(self):
        """SIGKILL every process the target started, then reap what is ours to reap."""
        for _ in range(3):
            self._sample()
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            for proc in list(self.seen.values()):
                if _running(proc):
                    try:
                        proc.kill()
                    except psutil.Error:
                        pass
            if not any(_running(p) for p in self.seen.values()):
                break
            time.sleep(0.05)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        _reap_orphans()

    # -- evidence ---------------------------------------------------------------------
    def _evidence(self, outcome, events, elapsed):
        with self._parser_lock:
            self.parser.close()
        code = self.proc.returncode
        exit_code = 128 - code if code is not None and code < 0 else code
        if any(e.get("event") == "stopped" for e in events):
            outcome = "stopped"
        if outcome is None:
            outcome = "passed" if exit_code == 0 else "crashed"
        ev = Evidence(source="run", target=_target_name(self.target),
                      start_method=self.start_method, outcome=outcome, exit_code=exit_code,
                      exceptions=self.parser.exceptions, lines=self.parser.lines,
                      warnings=self.parser.warnings, stacks=self.parser.stacks,
                      timeout_s=self.timeout)
        torch_event = next((e for e in events if e.get("event") == "torch"), {})
        ev.host = host.facts(torch_event.get("version"), torch_event.get("cuda"))
        shm = host.shm_gb()
        if shm:
            ev.host["shm_used_gb"] = round(shm[1], 3)
        ev.sharing_strategy = torch_event.get("sharing_strategy")
        limits = [e["nofile_limit"] for e in events if e.get("nofile_limit")]
        if limits:
            ev.host["nofile_limit"] = limits[-1]
        ev.loaders = [e for e in events if e.get("event") == "loader"]
        by_key = {loader["key"]: loader for loader in ev.loaders}
        for e in events:
            if e.get("event") == "workers" and e.get("key") in by_key:
                by_key[e["key"]].setdefault("pids", []).extend(e["pids"])
        ev.probe = [e for e in events if e.get("event") == "probe"]
        ev.workers = self._workers(events)
        ev.hints["elapsed_s"] = elapsed
        ev.hints["batches"] = sum(1 for e in events if e.get("event") == "batch")
        return ev

    def _workers(self, events):
        found = {}
        ids = {}
        for e in events:
            if e.get("event") == "worker_start":
                ids[e["pid"]] = e.get("worker_id")
            elif e.get("event") == "workers":
                for pid in e["pids"]:
                    found.setdefault(pid, WorkerExit(pid=pid))
            elif e.get("event") == "exit":
                worker = found.setdefault(e["worker_pid"], WorkerExit(pid=e["worker_pid"]))
                worker.exitcode = e.get("exitcode")
                worker.signal = e.get("signal")
        for pid, worker in found.items():
            worker.worker_id = ids.get(pid, worker.worker_id)
            if pid in self.peak_rss:
                worker.peak_rss_gb = self.peak_rss[pid] / _GIB
                worker.rss_gb = [(round(t, 2), b / _GIB) for t, b in self.rss_series[pid]]
            if self.last_available.get(pid) is not None:
                worker.available_gb = self.last_available[pid] / _GIB
        return list(found.values())


def _stack_dumps(folder):
    """The stacks that processes dumped on SIGUSR2, one file each, workers last."""
    dumps = []
    for name in sorted(os.listdir(folder)):
        if name.startswith("stack-"):
            try:
                with open(os.path.join(folder, name), encoding="utf-8",
                          errors="replace") as handle:
                    text = handle.read().strip()
            except OSError:
                continue
            if text:
                dumps.append(text)
    return dumps


def _running(proc):
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _reap_orphans():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _target_name(target):
    return target[1] if target[0] == "-m" else target[0]
