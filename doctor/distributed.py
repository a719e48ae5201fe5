"""The root cause of a distributed job's log: the first failure across its ranks.

One rank's DataLoader worker dies, that rank raises, and every other rank shows what
followed: a collective that times out or loses its peer (gloo's ``Connection closed by
peer``, NCCL's watchdog), the launcher's SIGTERM, torchrun's ``ChildFailedError``,
``mp.spawn``'s ``ProcessRaisedException``.  :func:`diagnose_job` takes the crashes of a
log (or of several logs, one per node: each crash names its ``node``), each already
diagnosed on its own, and picks the root cause:

1. the rank that the elastic agent's summary names under "Root Cause (first observed
   failure)" (the earliest such entry across nodes, by its time);
2. else the earliest crash with a cause of its own (not one of the symptoms above) by
   the times the log's lines print (ISO, logging-module or glog stamps), when every such
   crash has one;
3. else the first of them in log order (with several logs: in the order given).

The other ranks' symptoms and the launcher's lines are folded into the root cause's
evidence, each with its rank; they are never a diagnosis of their own.
"""
import copy
import re

#: what a launcher raises when a rank failed: it ends the others and gives up (torchrun's
#: elastic agent; torch.multiprocessing.spawn's join in the parent); also read by
#: :mod:`doctor.ranks` for a run's ranks
LAUNCHER_TEXTS = (r"ChildFailedError", r"ProcessExitedException", r"ProcessRaisedException",
                  r"process \d+ terminated with (?:signal|exit code)")
#: what a rank shows because another rank failed first, or the job was ended: the
#: launcher's words (torch/distributed/elastic/multiprocessing/api.py and errors/,
#: torch/multiprocessing/spawn.py), the collectives' (gloo's tcp pair, NCCL's
#: watchdog, the c10d store), and the scheduler's (its SIGTERM reaches the ranks'
#: workers too: "killed by signal: Terminated"). A ``ConnectionResetError`` in
#: ``rebuild_storage_fd`` is not one of them: it is the rank's own worker that died while
#: the rank fetched a tensor's file descriptor from it (the generic symptom, of that rank)
FOLLOWS = re.compile(
    "|".join(LAUNCHER_TEXTS) + r"|SignalException|"
    r"Connection closed by peer|\] Read error|"
    r"An existing connection was forcibly closed|Watchdog caught collective operation timeout|"
    r"watchdog got stuck|NCCL operations have failed|NCCL communicator was aborted|"
    r"DistBackendError|timed out in blocking wait|Socket Timeout|"
    r"Timed out waiting \d+ms for (?:recv|send) operation|"
    r"closing signal|death signal|Terminating process \d+ via signal|"
    r"killed by signal: Terminated|"
    r"failed \(exitcode: -?\d+\) local_rank|^srun: error: |^slurmstepd: error: ")
#: torch's logging prefixes on the launcher's lines: glog's "W1207 12:03:57.556000 18760
#: torch/.../api.py:1028] " and the logging module's "WARNING:torch.distributed....:"
_LOG_PREFIX = re.compile(r"(?:[IWEF]\d{4} [\d:.]+ +\d+ \S+:\d+\] |"
                         r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):torch[\w.]+:)")
_SPAWN_EXIT = re.compile(r"process (?P<rank>\d+) terminated with (?P<how>signal \w+|"
                         r"exit code -?\d+)")
MAX_FOLDED = 10


def is_generic(diags):
    """diagnose()'s list of what a bare symptom can mean (see diagnose.generic)."""
    return all(d.confidence == "possible" and d.evidence
               and d.evidence[0].startswith("the log holds only the generic symptom")
               for d in diags)


def _texts(crash):
    """Each exception's line (the one of its chain that says what it followed, if any),
    then the crash's notable lines."""
    for exc in crash["exceptions"]:
        lines = [e.last_line() for e in exc.chain()]
        yield next((text for text in lines if FOLLOWS.search(text)), lines[-1])
    yield from crash["lines"]


def follows(crash):
    """Whether a crash shows only what follows another failure (see :data:`FOLLOWS`):
    each of its exceptions was raised from one (a worker ended by the scheduler's SIGTERM,
    then "exited unexpectedly"), and each of its lines is one."""
    if not crash["exceptions"] and not crash["lines"]:
        return False
    return (all(any(FOLLOWS.search(e.last_line()) for e in exc.chain())
                for exc in crash["exceptions"])
            and all(FOLLOWS.search(text) for text in crash["lines"]))


def _where(crash):
    """``rank 1`` / ``node node1.log, rank 1`` / ``the launcher``."""
    rank = crash.get("rank")
    node = crash.get("node")
    who = "rank %d" % rank if rank is not None else "the launcher"
    return "node %s, %s" % (node, who) if node else who


def root_entry(ev):
    """The elastic summary's root cause entry: the earliest across nodes (by its time),
    or None when the log holds no summary."""
    roots = [e for e in ev.hints.get("elastic") or [] if e.get("root") and "rank" in e]
    if not roots:
        return None
    from doctor.logparse import chronological  # a log's reader: a run's ranks need none

    key = chronological([e.get("time") for e in roots])
    return min(roots, key=lambda e: key(e.get("time")))


def _of_entry(crash, entry):
    return (entry is not None and crash.get("rank") == entry["rank"]
            and (entry.get("node") is None or crash.get("node") == entry.get("node")))


def _short(text, size=200):
    text = text.split("\n", 1)[0].strip()
    prefix = _LOG_PREFIX.search(text)  # a progress bar may precede it on the line
    if prefix:
        text = text[prefix.end():]
    return text if len(text) <= size else text[:size - 3] + "..."


def diagnose_job(ev, per_crash, rest):
    """The diagnoses of a distributed log: ``per_crash`` is [(crash, diagnoses)] for its
    DataLoader crashes, ``rest`` the diagnoses of its warnings and static findings."""
    entry = root_entry(ev)
    real = [(c, d) for c, d in per_crash if d and not follows(c)]
    specific = [(c, d) for c, d in real if not is_generic(d)]
    chosen = (next((x for x in specific if _of_entry(x[0], entry)), None)
              or next((x for x in real if _of_entry(x[0], entry)), None)
              or _earliest(specific) or _earliest(real))
    found = []
    if chosen is not None:
        crash = chosen[0]
        found = [copy.copy(d) for d in chosen[1]]
        for diag in found:
            diag.evidence = list(diag.evidence)
            diag.rank, diag.node = crash.get("rank"), crash.get("node")
        if found[0].rank is not None:
            found[0].evidence.insert(0, _why_first(ev, crash, entry))
        found[0].evidence.extend(_folded(ev, chosen, per_crash))
        crashes = [c for c in ev.hints.get("crashes") or [] if not follows(c)]
        if len(crashes) > 1:
            found[0].evidence.append(
                "the log holds %s%d crashes of DataLoader workers; the root cause is taken "
                "from %s's, at %s" % ("at least " if ev.hints.get("dropped") else "",
                                      len(crashes), _where(crash), _line(crash)))
        codes = {d.code for d in found}
        for other, diags in specific:
            if other is crash or diags is chosen[1]:
                continue
            for diag in diags:
                if diag.code not in codes:
                    codes.add(diag.code)
                    diag = copy.copy(diag)
                    diag.rank, diag.node = other.get("rank"), other.get("node")
                    diag.evidence = list(diag.evidence) + [
                        "from a later crash of %s, at %s" % (_where(other), _line(other))]
                    found.append(diag)
    codes = {d.code for d in found}
    for diag in rest:  # warnings and static findings, once, for the whole log
        if diag.code not in codes:
            codes.add(diag.code)
            found.append(diag)
    return found


def _earliest(items):
    """The first of (crash, diagnoses) in time when each crash's time is printed (and
    they are several), else the first in log order; None for none."""
    if len(items) > 1 and all(c.get("time") for c, _ in items):
        from doctor.logparse import chronological

        key = chronological([c["time"] for c, _ in items])
        return min(items, key=lambda x: key(x[0]["time"]))
    return items[0] if items else None


def _timed(ev, crash):
    """Whether ``crash`` was chosen by the time its lines print."""
    crashes = [c for c in ev.hints.get("crashes") or [] if not follows(c)]
    return len(crashes) > 1 and all(c.get("time") for c in crashes)


def _line(crash):
    if crash.get("node"):
        return "%s line %d" % (crash["node"], crash["line"])
    return "log line %d" % crash["line"]


def _why_first(ev, crash, entry):
    where = _where(crash)
    if _of_entry(crash, entry):
        said = ", ".join("%s %s" % (key, entry[key]) for key in ("time", "host", "exitcode")
                         if entry.get(key) is not None)
        return ("%s failed first: the elastic agent's summary names it under \"Root Cause "
                "(first observed failure)\" (%s)" % (where, said))
    if entry is None and _timed(ev, crash):
        return ("%s failed first: its error is the earliest by the times the log prints "
                "(%s)" % (where, crash["time"]))
    if entry is not None:
        return ("%s shows the first cause of its own in the log (the elastic agent's "
                "summary names rank %d first, whose own error is not in the log)"
                % (where, entry["rank"]))
    crashes = (ev.hints.get("crashes") or []) + (ev.hints.get("other_crashes") or [])
    if not any(c.get("rank") not in (None, crash.get("rank")) for c in crashes):
        return "%s is the only rank whose failure the log shows" % where
    return ("%s shows the first cause of its own in the log; the other ranks show only "
            "what followed from it" % where)


def _folded(ev, chosen, per_crash):
    """The other ranks' symptoms, the launcher's lines and the summary's other entries,
    one line each (at most :data:`MAX_FOLDED`, then a count)."""
    crash, diags = chosen
    lines = []
    others = [c for c, d in per_crash if c is not crash] + list(
        ev.hints.get("other_crashes") or [])
    others.sort(key=lambda c: (c.get("node") or "", c["line"]))
    same = [c for c, d in per_crash if c is not crash and d is diags]
    for other in others:
        if other in same:
            lines.append("%s shows the same failure (at %s)" % (_where(other), _line(other)))
            continue
        if other.get("rank") is not None and not follows(other) and other["exceptions"]:
            lines.append("%s also failed (at %s): %s" % (
                _where(other), _line(other), _short(other["exceptions"][-1].last_line())))
            continue
        for text in _texts(other):
            if other.get("rank") is None and not FOLLOWS.search(text):
                continue
            lines.append("%s: %s (what followed from %s's failure)" % (
                _where(other), _short(text), _where(crash)))
    for entry in ev.hints.get("elastic") or []:
        if "rank" not in entry or _of_entry(crash, entry):
            continue
        if entry.get("root"):  # another node's agent: the first failure it saw
            if entry.get("node") is None:
                continue  # said first, by _why_first
            lines.append("node %s's elastic agent names rank %d first on that node, at %s: "
                         "later than %s's failure" % (entry.get("node"), entry["rank"],
                                                      entry.get("time"), _where(crash)))
            continue
        how = "exitcode %s%s" % (entry.get("exitcode"), " (%s)" % entry["signal"]
                                 if entry.get("signal") else "")
        lines.append("%srank %d ended with %s: the elastic agent's summary lists it under "
                     "\"Failures\", after the root cause" % (
                         "node %s, " % entry["node"] if entry.get("node") else "",
                         entry["rank"], how))
    unique = []
    for line in lines:
        if line not in unique:
            unique.append(line)
    if len(unique) > MAX_FOLDED:
        unique = unique[:MAX_FOLDED] + ["and %d more lines of the other ranks and the "
                                        "launcher" % (len(unique) - MAX_FOLDED)]
    return unique


def note(ev):
    """What a distributed log shows when no DataLoader failure explains it: the first
    failure across ranks that is not a symptom, with its rank."""
    entry = root_entry(ev)
    crashes = (ev.hints.get("crashes") or []) + (ev.hints.get("other_crashes") or [])
    crashes.sort(key=lambda c: (c.get("node") or "", c["line"]))
    own = [c for c in crashes if c["exceptions"] and not follows(c)]
    chosen = next((c for c in own if _of_entry(c, entry)), None) or (own[0] if own else None)
    if chosen is not None:
        return "the log shows a crash that is not a DataLoader failure: %s: %s" % (
            _where(chosen), chosen["exceptions"][-1].last_line())
    shown = [c for c in crashes if c.get("rank") is not None and c["exceptions"]]
    if shown:  # every rank here shows only what followed: the cause is in another log
        return ("the log shows no DataLoader failure, only what follows a failure elsewhere "
                "(%s: %s): the rank that failed first printed its error in another log "
                "(another node's)" % (_where(shown[0]),
                                      _short(shown[0]["exceptions"][-1].last_line(), 160)))
    if entry is not None:
        return ("the log shows no DataLoader failure: the elastic agent's summary names "
                "rank %d as the first failure (exitcode %s%s), and its own error is not in "
                "the log" % (entry["rank"], entry.get("exitcode"),
                             ", %s" % entry["signal"] if entry.get("signal") else ""))
    for crash in crashes:
        for exc in crash["exceptions"]:
            ended = _SPAWN_EXIT.search(exc.message[:300])
            if ended:
                return ("the log shows no DataLoader failure: mp.spawn's rank %s terminated "
                        "with %s, and its own error is not in the log"
                        % (ended["rank"], ended["how"]))
    return "the log shows no DataLoader failure"
