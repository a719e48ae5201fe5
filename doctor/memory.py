"""The memory timeline of a run: each process's RSS over time, and the batches delivered.

The supervisor samples every process of the tree every few milliseconds; keeping every
sample of an hour-long run would cost more than it tells, so a process's series keeps a
point when its RSS moved by a tenth or a quarter second went by since its last point,
and when a series reaches :data:`MAX_POINTS` every other point is dropped (the first and
the peak stay). The result goes into the evidence as ``memory`` (SPEC: "per-process RSS
samples"):

    {"unit": "GiB", "available_gb": 7.6,
     "processes": [{"pid": 41, "role": "main", "t": [0.0, ...], "rss_gb": [0.31, ...]},
                   {"pid": 42, "role": "worker 0", "loader": 1, ...}],
     "batches": {"t": [...], "count": [...]}}

``t`` is seconds since the run started; ``role`` is ``main`` (the process that made
the loaders: the script, or a notebook's kernel), ``worker N``, or the process's name;
a worker's ``loader`` numbers its DataLoader from 1, in the order the script made them.
"""
import time

EVERY_S = 0.25
MAX_POINTS = 512
_GIB = 1024 ** 3


class Timeline:
    def __init__(self, started):
        self.started = started
        self.series = {}     # pid -> [(t, bytes)]
        self.names = {}      # pid -> process name, for a process that is no worker
        self.batches = []    # [(t, batches delivered so far)]
        #: pid -> [(t, bytes)]: a forked worker's private memory (USS); its RSS counts the
        #: pages it still shares with the parent, so copy-on-access growth shows only here
        self.private = {}
        self.available = None

    def add(self, pid, rss, name=None, now=None):
        t = (now if now is not None else time.monotonic()) - self.started
        series = self.series.setdefault(pid, [])
        if name and pid not in self.names:
            self.names[pid] = name
        if series and t - series[-1][0] < EVERY_S and \
                abs(rss - series[-1][1]) <= 0.1 * series[-1][1]:
            return
        series.append((t, rss))
        if len(series) > MAX_POINTS:
            series[:] = _halved(series)

    def add_private(self, pid, uss, now=None):
        t = (now if now is not None else time.monotonic()) - self.started
        series = self.private.setdefault(pid, [])
        if series and t - series[-1][0] < EVERY_S:
            return
        series.append((t, uss))
        if len(series) > MAX_POINTS:
            series[:] = _halved(series)

    def add_batches(self, count, now=None):
        t = (now if now is not None else time.monotonic()) - self.started
        if not self.batches or self.batches[-1][1] != count:
            self.batches.append((t, count))
            if len(self.batches) > MAX_POINTS:
                self.batches[:] = _halved(self.batches)

    def to_json(self, main_pid=None, worker_ids=None, loaders=None):
        """The timeline; ``worker_ids``: {pid: worker id}; ``loaders``: {pid: the number
        of the loader whose worker it is}, its ``loader`` key."""
        worker_ids, loaders = worker_ids or {}, loaders or {}
        processes = []
        for pid, series in sorted(self.series.items(), key=lambda item: _order(
                item[0], main_pid, worker_ids)):
            if pid == main_pid:
                role = "main"
            elif pid in worker_ids:
                role = "worker %s" % worker_ids[pid]
            else:
                role = self.names.get(pid) or "process"
            process = {"pid": pid, "role": role,
                       "t": [round(t, 2) for t, _ in series],
                       "rss_gb": [round(b / _GIB, 4) for _, b in series]}
            if self.private.get(pid):
                process["private_t"] = [round(t, 2) for t, _ in self.private[pid]]
                process["private_gb"] = [round(b / _GIB, 4) for _, b in self.private[pid]]
            processes.append(process)
        found = {"unit": "GiB", "processes": processes,
                 "batches": {"t": [round(t, 2) for t, _ in self.batches],
                             "count": [c for _, c in self.batches]}}
        if self.available is not None:
            found["available_gb"] = round(self.available / _GIB, 3)
        return found


def _order(pid, main_pid, worker_ids):
    if pid == main_pid:
        return (0, 0, pid)
    if pid in worker_ids:
        worker = worker_ids[pid]
        return (1, worker if isinstance(worker, int) else 0, pid)
    return (2, 0, pid)


def _halved(series):
    """Every other point, keeping the first, the last and the highest."""
    peak = max(range(len(series)), key=lambda i: series[i][1])
    return [p for i, p in enumerate(series)
            if i % 2 == 0 or i == peak or i == len(series) - 1]
