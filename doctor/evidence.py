"""The evidence record: what a run (or a saved log) showed, before any conclusion.

A run fills it from three real sources: the agent's JSON-lines events written by the
target and its workers (loaders, the pickle probe, worker pids and exit statuses,
batches), the supervisor's psutil samples (RSS per process, host memory), and the
text every process printed (parsed by :mod:`doctor.logparse`, the same parser that
``doctor explain`` uses on a saved log).  :mod:`doctor.diagnose` reads only this.
"""
import json
from dataclasses import asdict, dataclass, field, fields
from typing import List, Optional

from doctor import forecast


@dataclass
class Frame:
    path: str
    line: int
    func: str


@dataclass
class Exc:
    """One exception as printed: its frames, type and message."""
    type: str
    message: str
    frames: List[Frame] = field(default_factory=list)
    #: the worker-side exception re-raised by torch ("Caught X in DataLoader worker
    #: process N. Original Traceback ..."), parsed into its own record
    original: Optional["Exc"] = None
    #: who printed it: "main", "worker 3", "pin memory thread", "child"
    process: str = "main"
    #: the exception that led to this one ("direct cause" / "during handling")
    context: Optional["Exc"] = None
    #: the rank of a distributed job that printed it (a log's ``[rank1]:`` prefix, srun's
    #: task label, mp.spawn's "Process 1"); None outside a distributed job
    rank: Optional[int] = None
    #: when its traceback began, as the log's prefix says (``doctor.logparse.when``)
    time: Optional[str] = None

    def chain(self):
        """This exception and the ones it was raised from, the earliest first."""
        found = []
        exc = self
        while exc is not None:
            found.append(exc)
            exc = exc.context
        return found[::-1]

    def last_line(self):
        head = self.message.split("\n", 1)[0]
        return "%s: %s" % (self.type, head) if head else self.type


@dataclass
class WorkerExit:
    pid: int
    worker_id: Optional[int] = None
    exitcode: Optional[int] = None    # >= 0 exit status
    signal: Optional[int] = None      # the signal that ended it
    peak_rss_gb: Optional[float] = None
    #: (seconds since the start, RSS GiB), one sample each time RSS moved by 10 %
    rss_gb: List[tuple] = field(default_factory=list)
    available_gb: Optional[float] = None  # host memory available when it was last seen
    #: in a distributed run: the rank whose worker it was, its local rank and node
    rank: Optional[int] = None
    local_rank: Optional[int] = None
    node: Optional[int] = None
    #: when it ended (seconds since the epoch, as the rank's clock read it)
    ended_at: Optional[float] = None


@dataclass
class Evidence:
    source: str = "run"               # "run" or "log"
    target: str = ""
    start_method: str = "spawn"
    outcome: str = "passed"           # crashed | passed | timeout | stopped
    exit_code: Optional[int] = None
    exceptions: List[Exc] = field(default_factory=list)   # the last of each chain
    lines: List[str] = field(default_factory=list)        # notable single lines
    warnings: List[str] = field(default_factory=list)
    stacks: List[str] = field(default_factory=list)       # faulthandler dumps
    workers: List[WorkerExit] = field(default_factory=list)
    probe: List[dict] = field(default_factory=list)       # pickle-probe culprits
    #: what each worker receives, pickled as spawn does: {key, role, bytes, seconds,
    #: workers} per loader and part (dataset, collate_fn, worker_init_fn)
    payload: List[dict] = field(default_factory=list)
    loaders: List[dict] = field(default_factory=list)
    #: the dataset's large Python containers: {key, path, type, length} (doctor.agent.hooks)
    containers: List[dict] = field(default_factory=list)
    #: a persistent loader's dataset attributes that the main process changed after its
    #: workers took their copy, seen when the next epoch began: {key, path, line (where
    #: that epoch began), epoch, changes: [{attribute, before, after, added}]}
    #: (doctor.agent.hooks; ``before``/``after`` only for a small value, else None)
    dataset_changes: List[dict] = field(default_factory=list)
    #: a loader whose shuffling DistributedSampler began another pass with the epoch of
    #: its first (set_epoch never called): {key, path, line (where that pass began),
    #: passes, epoch, seed} and the rank's labels (doctor.agent.hooks)
    sampler_epochs: List[dict] = field(default_factory=list)
    #: each worker of an IterableDataset's loader with two or more workers, when its loop
    #: ended: {key, pid, worker_id, num_workers, asked (it called get_worker_info()),
    #: init_fn (the loader has a worker_init_fn), init_changed (that changed the worker's
    #: copy of the dataset), dataset (its class), iter_path, iter_line (its __iter__)}
    #: (doctor.agent.worker); such a loader's record holds ``counted`` (its batches
    #: compared) and ``repeated`` (those that repeated one delivered before in the same
    #: pass), or ``counted: None`` where its batches could not be compared
    streams: List[dict] = field(default_factory=list)
    static: List[dict] = field(default_factory=list)      # checker findings
    host: dict = field(default_factory=dict)
    hints: dict = field(default_factory=dict)             # log: os/python/torch seen
    #: what may be missing from the evidence, and what the doctor could not do
    notes: List[str] = field(default_factory=list)
    sharing_strategy: Optional[str] = None
    timeout_s: Optional[float] = None
    #: in a distributed run, each rank's main process: {pid, rank, local_rank, node, nodes,
    #: host, failed_at, error} (``nodes``, how many the launcher's job has; ``failed_at``,
    #: seconds since the epoch, and ``error``, its uncaught exception's last line, when it
    #: raised one) (doctor.agent.startup)
    ranks: List[dict] = field(default_factory=list)
    #: the combined fix of every diagnosis and its rounds (doctor.patches.rounds)
    fix: Optional[dict] = None
    #: each process's RSS over the run, and the batches (doctor.memory); runs only
    memory: Optional[dict] = None
    #: doctor.forecast.Forecast of the run, when a worker's memory rose steadily
    forecast: Optional[object] = None

    def all_exceptions(self):
        """Every exception printed, each chain in order, worker originals after theirs."""
        for last in self.exceptions:
            for exc in last.chain():
                yield exc
                if exc.original is not None:
                    yield exc.original

    def worker_signals(self):
        return [w for w in self.workers if w.signal]


def read_events(path):
    """The agent's JSON-lines events; a line cut short by a killed process is skipped."""
    events = []
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    events.append(json.loads(line))
                except ValueError:
                    continue
    except OSError:
        pass
    return events


def to_json(ev):
    """``ev`` as plain JSON data: what a run showed, for a recording (see
    :func:`from_json`). The forecast is left out (it is computed from ``memory``), and
    so is the fix (it is made from the diagnoses)."""
    data = asdict(ev)
    data.pop("forecast", None)
    data.pop("fix", None)
    return data


def from_json(data):
    """The :class:`Evidence` that :func:`to_json` gave ``data`` for."""
    data = dict(data)
    data["exceptions"] = [_exc(e) for e in data.get("exceptions", [])]
    data["workers"] = [WorkerExit(**dict(w, rss_gb=[tuple(p) for p in w.get("rss_gb", [])]))
                       for w in data.get("workers", [])]
    known = {f.name for f in fields(Evidence)}
    ev = Evidence(**{k: v for k, v in data.items() if k in known})
    if ev.memory:
        ev.forecast = forecast.for_run(ev)
    return ev


def _exc(data):
    if data is None:
        return None
    return Exc(type=data["type"], message=data["message"],
               frames=[Frame(**f) for f in data.get("frames", [])],
               original=_exc(data.get("original")), process=data.get("process", "main"),
               context=_exc(data.get("context")), rank=data.get("rank"),
               time=data.get("time"))
