"""Start the target, watch its whole process tree, always end it, collect evidence.

The target runs in its own session under ``doctor.agent.boot``; the doctor becomes
the child subreaper (Linux), so workers orphaned by a dying main process are still
ours to see and to end.  psutil samples every process of the tree (RSS, host
memory); the target's stdout and stderr pass through live and are kept; the
agent's events arrive in a JSON-lines file.
"""
import codecs
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import psutil

from doctor import forecast, keeper, launchers, memory, process_tree, signals, status
from doctor.available import available_bytes
from doctor.agent import EVENTS, MAX_BATCHES, OWN, START_METHOD, stack_path
from doctor.evidence import Evidence, WorkerExit, read_events, to_json
from doctor.logparse import MAX_LINE, LogParser
from flake8_dlworker import host, platforms

SAMPLE_S = 0.05
SETTLE_S = 3.0       # after the main process exits, for the rest of the tree to finish
DRAIN_S = 15.0       # after the tree ended, for the output pipes to reach their end
END_BOUND_S = 15.0   # for ending every process of the run
DUMP_WAIT_S = 3.0    # for the processes asked for their stacks to write them
CHUNK = 64 * 1024
#: after a short read, how long the output may wait for more: a script that writes line
#: by line is then passed through and parsed in blocks, not one Python round per line
GATHER_S = 0.002
#: child processes that died re-running unguarded code ("An attempt has been made to
#: start a new process before the current process has finished its bootstrapping
#: phase"): a DataLoader's workers fail once each and the loader gives up, but a Pool
#: starts new ones for ever; past this many the run is ended, not left to --timeout
RESPAWN_LIMIT = 64
_BOOTSTRAP_FAILURE = "An attempt has been made to start a new process before"
NO_TIMELINE = "DLW_DOCTOR_NO_TIMELINE"
#: a file to write each run's evidence to, as JSON (tests/recordings: the fast test tier
#: replays real runs through the diagnosis from these)
SAVE_EVIDENCE = "DLW_DOCTOR_SAVE_EVIDENCE"
_GIB = 1024 ** 3


class Run:
    """One run of the target; :meth:`run` returns its :class:`Evidence`."""

    def __init__(self, target, start_method="spawn", timeout=None, max_batches=None,
                 stdout=None, show_status=False, on_start=None):
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
        self.timeline = None                # doctor.memory.Timeline, from the start
        self.started = None
        self.last_available = {}            # pid -> host bytes available when last seen
        self.seen = {}                      # pid -> psutil.Process (create time pinned)
        self.proc = None
        self.tree = None
        self.batches = {}                   # loader key -> batches delivered
        self.last_progress = None           # when workers started or a batch came
        self.missing = []                   # evidence that may be incomplete, and why
        self.bootstrap_failures = 0         # children that died re-running unguarded code
        self.ended = None                   # when the watch ended, before the tree did
        #: called once the target has started: work of the doctor's that can go on beside
        #: the run starts then, not before the target (on the run's critical path)
        self.on_start = on_start

    # -- the run ----------------------------------------------------------------------
    def run(self):
        platforms.become_subreaper()
        keeper.remove_dead_runs()
        tmp = tempfile.mkdtemp(prefix=keeper.folder_prefix("doctor"))
        try:
            return self._run_in(tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _run_in(self, tmp):
        events_path = os.path.join(tmp, "events.jsonl")
        token = uuid.uuid4().hex
        env = dict(os.environ)
        env.update({EVENTS: events_path, START_METHOD: self.start_method,
                    "PYTHONFAULTHANDLER": "1", process_tree.TOKEN: token})
        # the script's temporary files (multiprocessing's pymp-* folders, the sockets
        # torch passes tensors through) go to a folder of the run, so that what a process
        # killed at the end could not remove goes with the run's folder
        env["TMPDIR"] = os.path.join(tmp, "t")
        os.mkdir(env["TMPDIR"], 0o700)
        # no PYTHONUNBUFFERED: stderr is line-buffered (Python 3.9+), so each line a
        # process prints is one write and lines of several workers never interleave
        env.pop("PYTHONUNBUFFERED", None)
        if self.max_batches:
            env[MAX_BATCHES] = str(self.max_batches)
        command = [sys.executable, "-m", "doctor.agent.boot", *self.target]
        if launchers.is_launcher(self.target):
            command = launchers.command(self.target)
        # the ranks a launcher starts, or a script that runs itself again as a rank
        # (Lightning's ddp), load the agent at their start
        env = launchers.startup_env(tmp, token, env)
        started = self.started = time.monotonic()
        # DLW_DOCTOR_NO_TIMELINE: for bench/memory_bench.py, which measures its cost
        self.timeline = None if os.environ.get(NO_TIMELINE) else memory.Timeline(started)
        if signals.received() is not None:  # ended before it began
            return self._evidence("stopped", [], 0.0)
        # ends the tree should the doctor die before it does (SIGKILL, OOM killer)
        self.keeper = keeper.Keeper(token, tmp)
        self.proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            env=env, **platforms.own_session_options())
        self.tree = process_tree.ProcessTree(self.proc.pid, token,
                                             spare=[self.keeper.proc.pid])
        try:
            self.keeper.watch(self.proc.pid, psutil.Process(self.proc.pid).create_time())
        except psutil.Error:  # already gone
            pass
        readers = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, self.stdout, False),
                             daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, sys.stderr, True),
                             daemon=True),
        ]
        for reader in readers:
            reader.start()
        if self.on_start is not None:
            self.on_start()
        outcome = None
        try:
            outcome = self._watch(started, events_path)
            if outcome is None:
                self._settle()
        except KeyboardInterrupt:  # only where no handler of doctor.signals is installed
            signals.note(signal.SIGINT)
            outcome = "stopped"
        finally:
            if outcome in ("stopped", "timeout"):
                self._ask_for_stacks(events_path)
            self.ended = time.monotonic()
            self._end_tree()
            self.keeper.close()
            self._drain(readers)
            if self.status:
                self.status.clear()
        events = read_events(events_path)
        ev = self._evidence(outcome, events, time.monotonic() - started)
        ev.stacks.extend(_stack_dumps(tmp))
        if os.environ.get(SAVE_EVIDENCE):
            with open(os.environ[SAVE_EVIDENCE], "w", encoding="utf-8") as handle:
                json.dump(to_json(ev), handle, indent=1, sort_keys=True)
        return ev

    def _watch(self, started, events_path):
        """Sample until the main process exits, the time is up or a signal came."""
        waiter = platforms.exit_waiter(self.proc.pid)  # the main process's end wakes us
        try:
            return self._watch_until(started, events_path, waiter)
        finally:
            waiter.close()

    def _watch_until(self, started, events_path, waiter):
        deadline = started + self.timeout if self.timeout else None
        offset = 0
        while True:
            self._sample()
            offset = self._read_progress(events_path, offset)
            if self.status:
                self.status.show(time.monotonic() - started, self._alive(),
                                 self._peak_worker_gb(), sum(self.batches.values()))
            if signals.received() is not None:
                return "stopped"
            if self.proc.poll() is not None:
                return None
            if deadline is not None and time.monotonic() >= deadline:
                return "timeout"
            if self.bootstrap_failures >= RESPAWN_LIMIT:
                self.missing.append(
                    "the doctor ended the run after %d child processes had died re-running "
                    "the script's unguarded code: new ones were being started in their "
                    "place, as a multiprocessing.Pool does, and would have been for ever"
                    % self.bootstrap_failures)
                return "stopped"
            waiter.wait(SAMPLE_S)

    def _settle(self):
        """The main process has exited: give the rest of the tree a bounded moment to
        finish on its own, so that a worker's last words are not cut off by our kill."""
        deadline = time.monotonic() + SETTLE_S
        pause = 0.005  # the rest usually ends within milliseconds (the resource tracker)
        while time.monotonic() < deadline and signals.received() is None:
            self._sample()
            if not self.tree.members(by_environment=False):
                return
            time.sleep(pause)
            pause = min(pause * 2, SAMPLE_S)

    def _drain(self, readers):
        """Wait, with a bound, until every output pipe reached its end."""
        deadline = time.monotonic() + DRAIN_S
        for reader in readers:
            reader.join(max(0.0, deadline - time.monotonic()))
        if any(reader.is_alive() for reader in readers):
            self.missing.append("the output of some process may be cut short: its pipe "
                                "was still open %gs after the tree ended" % DRAIN_S)

    def _read_progress(self, path, offset):
        """Read the events written since ``offset``: batches per loader, and when the
        run last made progress (workers started, a batch delivered)."""
        try:
            with open(path, "rb") as handle:
                handle.seek(offset)
                chunk = handle.read()
        except OSError:
            return offset
        end = chunk.rfind(b"\n") + 1
        for line in chunk[:end].splitlines():
            if b'"batch"' not in line and b'"workers"' not in line:
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "batch":
                self.batches[event.get("key")] = event.get("n", 0)
                if self.timeline is not None:
                    self.timeline.add_batches(sum(self.batches.values()))
            self.last_progress = time.monotonic()
        return offset + end

    def _pump(self, stream, echo, parse):
        """Copy one output stream through as it arrives (a ``\\r`` progress bar stays
        live), and feed stderr to the parser line by line, each line bounded."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        lines = LineSplitter(self._feed_block) if parse else None
        fd = stream.fileno()
        while True:
            try:
                raw = os.read(fd, CHUNK)
            except OSError:
                break
            if not raw:
                break
            text = decoder.decode(_with_what_follows(fd, raw))
            if self.status:
                self.status.clear()
            echo = _echo(echo, text)
            if lines is not None:
                lines.add(text)
        if lines is not None:
            lines.add(decoder.decode(b"", final=True))
            lines.close()
        stream.close()

    def _feed_block(self, block):
        self.bootstrap_failures += block.count(_BOOTSTRAP_FAILURE)
        with self._parser_lock:
            self.parser.feed_block(block)

    # -- the process tree -------------------------------------------------------------
    def _tree(self):
        """The target and its descendants, and orphans re-parented to us: cheap enough
        to call every sample (the full search is :meth:`ProcessTree.members`)."""
        pids = platforms.descendants([self.proc.pid, os.getpid()])
        if pids is None:
            return self._tree_from_the_process_table()
        procs = []
        for pid in [self.proc.pid] + pids:
            proc = self.seen.get(pid)
            if proc is None:
                try:
                    proc = psutil.Process(pid)
                except psutil.Error:
                    continue
            procs.append(proc)
        return procs

    def _tree_from_the_process_table(self):
        procs = {}
        try:
            root = psutil.Process(self.proc.pid)
            procs[root.pid] = root
            for proc in root.children(recursive=True):
                procs[proc.pid] = proc
        except psutil.Error:
            pass
        try:  # orphans re-parented to us (subreaper)
            for proc in psutil.Process().children(recursive=True):
                procs.setdefault(proc.pid, proc)
        except psutil.Error:
            pass
        return list(procs.values())

    def _sample(self):
        available = available_bytes()
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
            if self.timeline is not None:
                self.timeline.add(proc.pid, rss, None if proc.pid in self.timeline.names
                                  else _name(proc))
                if self.start_method in ("fork", OWN) and proc.pid != self.proc.pid:
                    self._sample_private(proc)
            series = self.rss_series.setdefault(proc.pid, [])
            if not series or abs(rss - series[-1][1]) > 0.1 * series[-1][1]:
                series.append((time.monotonic() - (self.started or 0), rss))
            self.last_available[proc.pid] = available
        if self.timeline is not None and available is not None:
            self.timeline.available = available

    def _sample_private(self, proc):
        """A process that may be forked: its private memory (USS), which rises as it
        copies the pages it shares with the parent (read from smaps: only under fork)."""
        try:
            self.timeline.add_private(proc.pid, proc.memory_full_info().uss)
        except (psutil.Error, AttributeError, OSError):
            pass

    def _alive(self):
        return sum(1 for p in self.seen.values() if process_tree.alive(p))

    def _peak_worker_gb(self):
        others = [v for pid, v in self.peak_rss.items() if pid != self.proc.pid]
        return max(others) / _GIB if others else 0.0

    def _ask_for_stacks(self, events_path):
        """Ask every process that registered a stack dump for its stacks (SIGUSR2, or
        a trigger file where there is none), then give them a moment to print."""
        if self.proc is None:
            return
        registered = {e["pid"] for e in read_events(events_path)
                      if e.get("event") in ("main_start", "worker_start")}
        folder = os.path.dirname(events_path)
        asked = []
        for pid in registered:
            proc = self.seen.get(pid)
            if (proc is not None and process_tree.alive(proc)
                    and platforms.ask_for_stacks(proc, stack_path(folder, pid))):
                asked.append(pid)
        deadline = time.monotonic() + DUMP_WAIT_S
        while asked and time.monotonic() < deadline:  # until every asked file has a stack
            if all(_has_dump(folder, pid) for pid in asked):
                time.sleep(0.1)  # the rest of the threads of the last dump
                return
            time.sleep(0.05)

    def _end_tree(self):
        """End every process of the run (see :mod:`doctor.process_tree`), then reap."""
        if self.proc is None:
            return
        self._sample()
        left = self.tree.end(END_BOUND_S)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        process_tree.reap_children()
        for proc in left:
            self.missing.append("could not end %s within %gs" % (
                process_tree.describe(proc), END_BOUND_S))

    # -- evidence ---------------------------------------------------------------------
    def _evidence(self, outcome, events, elapsed):
        with self._parser_lock:
            self.parser.close()
        code = self.proc.returncode if self.proc is not None else None
        exit_code = 128 - code if code is not None and code < 0 else code
        stopped_by = None
        if signals.received() is not None and outcome in ("stopped", None):
            stopped_by = "signal"
        elif any(e.get("event") == "stopped" for e in events):
            stopped_by = "max-batches"
        elif outcome == "stopped":
            stopped_by = "the doctor"  # RESPAWN_LIMIT
        if any(e.get("event") == "stopped" for e in events):
            outcome = "stopped"
        if outcome == "stopped" and signals.received() is not None:
            self.missing.insert(0, "the doctor received %s and ended the run early"
                                % signals.name(signals.received()))
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
        if self.start_method == OWN:  # --compare: the method the script's workers got
            ev.start_method = next((m for m in [
                e.get("method") for e in ev.loaders if e.get("num_workers")] + [
                e.get("start_method") for e in events if e.get("event") == "main_start"]
                if m), "the script's own")
        by_key = {loader["key"]: loader for loader in ev.loaders}
        for e in events:
            if e.get("event") == "workers" and e.get("key") in by_key:
                by_key[e["key"]].setdefault("pids", []).extend(e["pids"])
            elif e.get("event") == "batch" and "counted" in e and e.get("key") in by_key:
                by_key[e["key"]]["counted"] = e["counted"]
                by_key[e["key"]]["repeated"] = e.get("repeated")
        owner = {pid: loader["key"] for loader in ev.loaders for pid in loader.get("pids", ())}
        ev.streams = [dict({k: e.get(k) for k in _STREAM}, key=owner.get(e.get("pid")))
                      for e in events if e.get("event") == "stream"]
        ev.probe = [e for e in events if e.get("event") == "probe"]
        ev.payload = [{k: e.get(k) for k in ("key", "role", "bytes", "seconds", "workers")}
                      for e in events if e.get("event") == "payload"]
        ev.workers = self._workers(events)
        ev.ranks = _ranks(events)
        if launchers.is_launcher(self.target):
            ev.hints["launcher"] = launchers.describe(self.target)
        if any(e.get("event") == "stopped" for e in events) and signals.received() is None:
            _leave_out_shutdown_crashes(ev)
        ev.containers = [dict(found, key=e.get("key")) for e in events
                         if e.get("event") == "containers" for found in e.get("found", [])]
        ev.dataset_changes = [{k: e.get(k) for k in ("key", "path", "line", "epoch", "changes")}
                              for e in events if e.get("event") == "dataset_changed"]
        ev.sampler_epochs = sorted(
            ({k: e.get(k) for k in ("key", "path", "line", "passes", "epoch", "seed", "rank",
                                    "node")}
             for e in events if e.get("event") == "sampler_epoch"),
            key=lambda e: (e["rank"] is None, e["rank"] or 0))
        if self.timeline is not None:
            main = next((e["pid"] for e in events if e.get("event") == "main_start"), None)
            ev.memory = self.timeline.to_json(main, *_worker_places(events))
            _rank_places(ev.memory, ev.ranks, ev.workers)
            ev.forecast = forecast.for_run(ev)
        ev.hints["elapsed_s"] = elapsed
        if outcome == "stopped":  # who stopped it: only --max-batches' stop is a finished run
            ev.hints["stopped_by"] = stopped_by
        ev.hints["batches"] = sum(1 for e in events if e.get("event") == "batch")
        if self.last_progress is not None:  # seconds from the last progress to the end
            ev.hints["idle_s"] = round(self.ended - self.last_progress, 2)
        ev.notes.extend(self.missing)
        if self.tree is not None and self.tree.tracker_cleaned_up:
            _leave_out_tracker_cleanup(ev)
        return ev

    def _workers(self, events):
        found = {}
        ids = {}
        stopped = False  # exits after the agent stopped the run (--max-batches) are its
        for e in events:  # shutdown, not evidence
            if e.get("event") == "stopped":
                stopped = True
            elif e.get("event") == "worker_start":
                ids[e["pid"]] = e.get("worker_id")
            elif e.get("event") == "workers":
                for pid in e["pids"]:
                    _label(found.setdefault(pid, WorkerExit(pid=pid)), e)
            elif e.get("event") == "exit" and not stopped:
                worker = found.setdefault(e["worker_pid"], WorkerExit(pid=e["worker_pid"]))
                worker.exitcode = e.get("exitcode")
                worker.signal = e.get("signal")
                worker.ended_at = e.get("t")
                _label(worker, e)
        for pid, worker in found.items():
            worker.worker_id = ids.get(pid, worker.worker_id)
            if pid in self.peak_rss:
                worker.peak_rss_gb = self.peak_rss[pid] / _GIB
                worker.rss_gb = [(round(t, 2), b / _GIB) for t, b in self.rss_series[pid]]
            if self.last_available.get(pid) is not None:
                worker.available_gb = self.last_available[pid] / _GIB
        return list(found.values())


#: what a worker of an IterableDataset says of itself (event ``stream``)
_STREAM = ("pid", "worker_id", "num_workers", "asked", "init_fn", "init_changed", "dataset",
           "iter_path", "iter_line")


def _label(worker, event):
    """The rank labels of the rank that wrote ``event``, on its worker."""
    for key in ("rank", "local_rank", "node"):
        if event.get(key) is not None:
            setattr(worker, key, event[key])


def _ranks(events):
    """Each rank's main process, and its uncaught exception (doctor.agent.startup): a
    rank from its start, or the script's process once it made itself one (Lightning's
    ddp, ``rank_start``)."""
    found = {}
    for e in events:
        if e.get("event") in ("main_start", "rank_start") and e.get("rank") is not None:
            found[e["pid"]] = {key: e.get(key) for key in ("pid", "rank", "local_rank",
                                                           "node", "nodes", "host")}
        elif e.get("event") == "uncaught" and e.get("pid") in found:
            rank = found[e["pid"]]
            if rank.get("failed_at") is None:
                rank["failed_at"] = e.get("t")
                rank["error"] = ("%s: %s" % (e.get("type"), e.get("message"))).rstrip(": ")
    return sorted(found.values(), key=lambda r: (r["rank"] is None, r["rank"] or 0, r["pid"]))


def _rank_places(memory, ranks, workers):
    """In a distributed run, each rank's main process and each worker on the memory
    timeline carry their rank; every rank's main process is a ``main``."""
    mains = {r["pid"]: r["rank"] for r in ranks if r.get("rank") is not None}
    of_worker = {w.pid: w.rank for w in workers if w.rank is not None}
    for process in memory["processes"]:
        if process["pid"] in mains:
            process["role"], process["rank"] = "main", mains[process["pid"]]
        elif process["pid"] in of_worker:
            process["rank"] = of_worker[process["pid"]]
    memory["processes"].sort(key=lambda p: (  # each rank's main, then the workers, by rank
        0 if p["role"] == "main" else 1 if str(p["role"]).startswith("worker") else 2,
        p.get("rank") if isinstance(p.get("rank"), int) else -1))


def _worker_places(events):
    """({pid: worker id}, {pid: loader number}) of every worker: the loaders numbered
    from 1 in the order the script made them; a worker's id from its own word, else its
    place among its loader's workers (one that died before it could say)."""
    numbers = {}
    for e in events:
        if e.get("event") == "loader":
            numbers.setdefault(e.get("key"), len(numbers) + 1)
    ids, loaders = {}, {}
    for e in events:
        if e.get("event") == "workers":
            for index, pid in enumerate(e.get("pids") or []):
                ids.setdefault(pid, index)
                if e.get("key") in numbers:
                    loaders[pid] = numbers[e["key"]]
        elif e.get("event") == "worker_start":
            ids[e["pid"]] = e.get("worker_id")
    return ids, loaders


def _leave_out_shutdown_crashes(ev):
    """A run stopped after --max-batches ends in the doctor's shutdown of the script, as
    its worker exits do (``Run._workers``): a process that aborts in that shutdown (a
    native library's exit on a loaded machine) is not the script's crash. The note says
    what was left out."""
    fatal = [s for s in ev.stacks if s.startswith("Fatal Python error")]
    if not fatal:
        return
    ev.stacks = [s for s in ev.stacks if not s.startswith("Fatal Python error")]
    ev.lines = [line for line in ev.lines if not line.startswith("Fatal Python error")]
    ev.notes.append("%s in a process while the doctor stopped the run after --max-batches: "
                    "part of that shutdown, not counted as a crash" % fatal[0].split("\n")[0])


def _leave_out_tracker_cleanup(ev):
    """The resource tracker's "leaked semaphore objects" warning after the doctor ended
    the run is about what the killed processes left, which it then removed."""
    cleanup = [w for w in ev.warnings if "resource_tracker: There appear to be" in w]
    if cleanup:
        ev.warnings = [w for w in ev.warnings if w not in cleanup]
        ev.notes.append("the run's resource tracker removed the semaphores and shared "
                        "memory that the processes the doctor ended had left; its warning "
                        "about leaked objects is about those")


def _with_what_follows(fd, raw):
    """``raw``, and what arrives on ``fd`` within GATHER_S after a short read (up to
    CHUNK bytes); where pipes cannot be polled (Windows), ``raw`` alone."""
    if len(raw) >= CHUNK // 2 or os.name != "posix":
        return raw
    time.sleep(GATHER_S)
    parts, size = [raw], len(raw)
    while size < CHUNK and select.select([fd], [], [], 0)[0]:
        more = os.read(fd, CHUNK - size)
        if not more:  # the end: the next read sees it again
            break
        parts.append(more)
        size += len(more)
    return b"".join(parts)


def _echo(stream, text):
    """Pass ``text`` through to ``stream``; the stream to use next, None once its reader
    has gone (``doctor train.py | head -1``): the run then ends as SIGPIPE would have
    ended the script, and the pipe is still read to its end."""
    if stream is None:
        return None
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        signals.note(platforms.SIGPIPE)
        return None
    except (OSError, ValueError):
        pass
    return stream


def _name(proc):
    """A short name for a process of the run that is neither main nor a worker."""
    try:
        command = " ".join(proc.cmdline())
    except psutil.Error:
        return None
    for marker, name in (("resource_tracker", "resource tracker"),
                         ("forkserver", "fork server"), ("ipykernel", "kernel launcher"),
                         ("torch.distributed.run", "launcher"), ("torchrun", "launcher"),
                         ("doctor.agent.boot", "doctor agent")):
        if marker in command:
            return name
    return None


def _stack_dumps(folder):
    """The stacks that processes dumped when asked, one file each, workers last."""
    dumps = []
    for name in sorted(os.listdir(folder)):
        if name.startswith("stack-") and name.endswith(".txt"):
            try:
                with open(os.path.join(folder, name), encoding="utf-8",
                          errors="replace") as handle:
                    text = handle.read().strip()
            except OSError:
                continue
            if text:
                dumps.append(text)
    return dumps


def _has_dump(folder, pid):
    try:
        return os.path.getsize(stack_path(folder, pid)) > 0
    except OSError:
        return False


class LineSplitter:
    """Text in, blocks of whole lines out to ``feed`` (joined by newlines, without the
    last one), so that the parser skips quiet stretches in one step (LogParser.feed_block)
    instead of a Python call per line; a line longer than MAX_LINE is cut there and the
    rest of it dropped, so one huge line costs bounded memory."""

    def __init__(self, feed):
        self.feed = feed
        self.partial = []
        self.size = 0
        self.cut = False

    def add(self, text):
        end = text.rfind("\n")
        if end < 0:
            self._keep(text)
            return
        first = text.find("\n")
        self._keep(text[:first])
        head = "".join(self.partial)
        self.partial, self.size, self.cut = [], 0, False
        self.feed(head + text[first:end])
        self._keep(text[end + 1:])

    def _keep(self, piece):
        """The start of a line whose end has not come yet, up to MAX_LINE."""
        if self.cut or not piece:
            return
        room = MAX_LINE - self.size
        if len(piece) > room:
            piece, self.cut = piece[:room], True
        self.partial.append(piece)
        self.size += len(piece)

    def close(self):
        if self.partial:
            self.feed("".join(self.partial))
            self.partial, self.size = [], 0


def _target_name(target):
    if launchers.is_launcher(target):  # what each rank runs
        try:
            return launchers.script_of(target)[1]
        except launchers.NotALauncherCommand:
            pass
    return target[1] if target[0] == "-m" else target[0]
