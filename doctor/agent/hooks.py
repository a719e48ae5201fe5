"""The main-process side: hooks on torch's DataLoader, installed when torch loads it.

- every ``DataLoader`` records where it was made and is forced onto the doctor's
  start method, also when it passes its own ``multiprocessing_context``;
- before a loader's workers start, the pickle probe
  (:func:`flake8_dlworker.testing.find_unpicklable`) names the first object the
  workers could not receive;
- the workers' pids are recorded, and a watcher thread reads each worker's exit
  status with ``waitid(WNOWAIT)`` (it leaves the zombie to torch, which reads it too);
- batches are counted per loader, for the live status and ``--max-batches``; those of
  an IterableDataset's loader with several workers are compared, and the batches that
  repeat one already delivered are counted (a worker that yields the whole stream, as
  every other does, repeats theirs);
- when a loader with persistent workers starts its next epoch, the dataset's top-level
  attributes that the main process changed since the workers took their copy are
  named (the workers never see those changes);
- when a loader whose sampler is a shuffling ``DistributedSampler`` begins another
  pass with the sampler's epoch unchanged (``set_epoch`` never called), it is named:
  that pass repeats the first one's order;
- when torch gives up on a worker (timeout, crash), the workers are asked for
  their stacks before torch ends them.
"""
import functools
import os
import sys
import threading
import time
import weakref

from doctor.agent import (EVENTS, MAX_BATCHES, OWN, START_METHOD, emit,
                          own_start_method, stack_path)
from doctor.agent import worker as agent_worker
from doctor.agent.attributes import attributes
from flake8_dlworker import platforms

_TORCH_DIR = None
_probed = weakref.WeakSet()
_counts = {}          # loader key -> batches delivered
_watched = {}         # pid -> (worker id, its multiprocessing.Process)
# re-entrant: torch's SIGCHLD handler calls _poll_exits, and it runs in the main thread
# between any two bytecodes, also while the main thread holds this lock (a plain Lock
# then waits on itself forever: seen when two workers exited at shutdown)
_lock = threading.RLock()
_watcher = None
_rank_entry = None
_on_loader = None


class StopRun(SystemExit):
    """Raised from a loader's ``__next__`` once every loader delivered --max-batches."""


def install(rank_entry=None, on_loader=None):
    """Patch torch now if its DataLoader is loaded, else when it is imported;
    ``rank_entry(fn, index, *args)`` is what each rank that
    ``torch.multiprocessing.start_processes`` starts runs in place of ``fn``;
    ``on_loader()`` is called as each loader is made, before its event."""
    global _rank_entry, _on_loader
    _rank_entry, _on_loader = rank_entry, on_loader
    if "torch.utils.data.dataloader" in sys.modules:
        _patch(sys.modules["torch.utils.data.dataloader"])
        return
    sys.meta_path.insert(0, _Finder())


class _Finder:
    """Meta path finder that patches ``torch.utils.data.dataloader`` once it ran."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch.utils.data.dataloader":
            return None
        sys.meta_path.remove(self)
        from importlib.util import find_spec

        spec = find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        real_exec = spec.loader.exec_module

        def exec_module(module):
            real_exec(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


def _patch(dl):
    global _TORCH_DIR
    import torch
    import torch.multiprocessing as tmp
    from torch.utils.data._utils import worker as torch_worker

    if getattr(dl, "_dlw_patched", False):  # a rank forked from a hooked process
        return
    dl._dlw_patched = True
    _TORCH_DIR = os.path.dirname(torch.__file__)
    method = os.environ.get(START_METHOD, "spawn")
    agent_worker.original = torch_worker._worker_loop
    torch_worker._worker_loop = agent_worker.worker_loop
    try:
        cuda = bool(torch.cuda.is_available())
    except Exception:  # a broken driver says so later, in the run itself
        cuda = False
    emit("torch", version=torch.__version__, cuda=cuda,
         sharing_strategy=tmp.get_sharing_strategy())

    loader_init = dl.DataLoader.__init__

    # its signature stays torch's: Lightning re-makes a loader (with a DistributedSampler
    # under ddp) from the parameters inspect.signature finds, and would lose the others
    @functools.wraps(loader_init)
    def __init__(self, *args, **kwargs):
        loader_init(self, *args, **kwargs)
        if _on_loader is not None:
            _on_loader()
        site = _user_site()
        self._dlw_key = "%s:%d#%d.%d" % (site[0], site[1], os.getpid(), id(self))
        forced = None
        if (self.num_workers > 0 and self.multiprocessing_context is not None
                and method != OWN):
            given = self.multiprocessing_context.get_start_method()
            if given != method:
                self.multiprocessing_context = method
                forced = given
        emit("loader", key=self._dlw_key, path=site[0], line=site[1],
             method=_method_of(self), num_workers=self.num_workers, pin_memory=self.pin_memory,
             persistent_workers=self.persistent_workers,
             prefetch_factor=self.prefetch_factor, overrode=forced)

    dl.DataLoader.__init__ = __init__

    loader_iter = dl.DataLoader.__iter__

    def __iter__(self):
        try:
            _sampler_pass(self)
        except Exception as exc:  # the check must never be why the script fails
            emit("sampler_check_error", error="%s: %s" % (type(exc).__name__, exc))
        return loader_iter(self)

    dl.DataLoader.__iter__ = __iter__

    base_init = dl._BaseDataLoaderIter.__init__

    def base_iter_init(self, loader):
        self._dlw_key = getattr(loader, "_dlw_key", None) or "loader#%d" % id(loader)
        with _lock:
            _counts.setdefault(self._dlw_key, 0)
        base_init(self, loader)

    dl._BaseDataLoaderIter.__init__ = base_iter_init

    base_next = dl._BaseDataLoaderIter.__next__
    limit = int(os.environ.get(MAX_BATCHES) or 0)

    def __next__(self):
        data = base_next(self)
        key = getattr(self, "_dlw_key", None)
        with _lock:
            _counts[key] = _counts.get(key, 0) + 1
            count = _counts[key]
            done = limit and all(n >= limit for n in _counts.values())
        repeats = _repeats(self, data)
        emit("batch", key=key, n=count, **repeats)
        if done:
            emit("stopped", batches=dict(_counts))
            raise StopRun(0)
        return data

    dl._BaseDataLoaderIter.__next__ = __next__

    mp_init = dl._MultiProcessingDataLoaderIter.__init__

    def mp_iter_init(self, loader):
        kept = None
        if loader not in _probed:
            _probed.add(loader)
            _python_objects(loader)
            if _method_of(loader) != "fork":
                kept = _probe(loader)
        # what the workers are about to receive, where they keep it for every epoch
        self._dlw_sent = attributes(loader.dataset) if loader.persistent_workers else None
        if (loader.num_workers >= 2
                and getattr(loader, "_dataset_kind", None) == dl._DatasetKind.Iterable):
            self._dlw_batches = {"counted": 0, "repeated": 0, "seen": set()}
        try:
            if kept is None:
                mp_init(self, loader)
            else:
                with kept.reused_by_next_worker():
                    mp_init(self, loader)
        finally:
            workers = [w for w in getattr(self, "_workers", []) if w.pid]
            pids = [w.pid for w in workers]
            if pids:
                _watch(workers)
                emit("workers", key=getattr(loader, "_dlw_key", None), pids=pids,
                     nofile_limit=_nofile())

    dl._MultiProcessingDataLoaderIter.__init__ = mp_iter_init

    reset = dl._MultiProcessingDataLoaderIter._reset

    def _reset(self, loader, first_iter=False):
        if getattr(self, "_dlw_batches", None) is not None:
            self._dlw_batches["seen"] = set()  # a new pass over the stream
        if not first_iter and getattr(self, "_dlw_sent", None) is not None:
            try:
                _dataset_changed(self, loader)
            except Exception as exc:  # the check must never be why the script fails
                emit("dataset_check_error", error="%s: %s" % (type(exc).__name__, exc))
        return reset(self, loader, first_iter)

    dl._MultiProcessingDataLoaderIter._reset = _reset

    get_data = dl._MultiProcessingDataLoaderIter._get_data

    def _get_data(self, *args, **kwargs):
        try:
            return get_data(self, *args, **kwargs)
        except Exception:  # a dead worker or torch's own timeout
            _poll_exits()
            _ask_for_stacks(self)
            raise

    dl._MultiProcessingDataLoaderIter._get_data = _get_data

    shutdown = dl._MultiProcessingDataLoaderIter._shutdown_workers

    def _shutdown_workers(self):
        _poll_exits()  # read abnormal exits before torch joins (and reaps) the workers
        return shutdown(self)

    dl._MultiProcessingDataLoaderIter._shutdown_workers = _shutdown_workers

    # torch's SIGCHLD handler raises at once, and its is_alive() checks then reap the
    # worker: read the exit status first, without reaping (WNOWAIT)
    from torch.utils.data._utils import signal_handling

    real_check = signal_handling._error_if_any_worker_fails

    def _error_if_any_worker_fails():
        _poll_exits()
        return real_check()

    signal_handling._error_if_any_worker_fails = _error_if_any_worker_fails
    _patch_start_processes(tmp)


def _patch_start_processes(tmp):
    """``torch.multiprocessing.start_processes`` (``mp.spawn`` calls it, Lightning's
    ``ddp_spawn`` too): each rank it starts runs the rank entry first
    (:func:`doctor.agent.startup.spawned_rank`), which hooks the rank as this process
    is hooked; it pickles by reference, as the worker loop does."""
    spawn_module = sys.modules.get("torch.multiprocessing.spawn")
    real = getattr(spawn_module, "start_processes", None)
    if real is None or _rank_entry is None:
        return

    def start_processes(*args, **kwargs):
        if "fn" in kwargs:
            kwargs["fn"] = functools.partial(_rank_entry, kwargs["fn"])
        elif args:
            args = (functools.partial(_rank_entry, args[0]),) + args[1:]
        return real(*args, **kwargs)

    functools.update_wrapper(start_processes, real)
    spawn_module.start_processes = start_processes
    if getattr(tmp, "start_processes", None) is real:
        tmp.start_processes = start_processes


def _method_of(loader):
    """The start method the loader's workers get: its own context, else the default (the
    forced one, or under --compare the script's own), read without fixing it."""
    if loader.multiprocessing_context is not None:
        return loader.multiprocessing_context.get_start_method()
    return own_start_method()


def _user_site():
    """The file and line of the first frame outside torch and the doctor."""
    frame = sys._getframe(2)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    while frame is not None:
        path = frame.f_code.co_filename
        if not (path.startswith(_TORCH_DIR or "\0") or path.startswith(here)):
            return os.path.abspath(path) if not path.startswith("<") else path, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


def _probe(loader):
    """Pickle what each worker receives as spawn does: the first part that cannot
    travel (event ``probe``), else its size and the time it took (event ``payload``).
    Returns what the user's own reductions gave (``KeptReductions``), for the first
    worker's real pickling to reuse: a ``__getstate__`` runs once per worker, as it
    does without the doctor."""
    try:
        from flake8_dlworker.testing import KeptReductions, measure
    except ImportError as exc:  # the probe must never be why the script fails
        emit("probe_error", error="%s: %s" % (type(exc).__name__, exc))
        return None
    kept = KeptReductions()
    for role in ("dataset", "collate_fn", "worker_init_fn"):
        obj = getattr(loader, role, None)
        if obj is None:
            continue
        started = time.perf_counter()
        try:
            culprit, size = measure(obj, root=role, kept=kept)
        except Exception as exc:  # the probe must never be why the script fails
            emit("probe_error", role=role, error="%s: %s" % (type(exc).__name__, exc))
            continue
        if size is not None:
            emit("payload", key=getattr(loader, "_dlw_key", None), role=role, bytes=size,
                 seconds=round(time.perf_counter() - started, 4),
                 workers=loader.num_workers)
        if culprit is not None:
            fields = culprit._asdict()
            fields["describe"] = str(culprit)
            emit("probe", key=getattr(loader, "_dlw_key", None), role=role,
                 seconds=time.perf_counter() - started, **fields)
            return None
    return kept


#: a container of the dataset this long holds enough Python objects to matter under fork
MANY_OBJECTS = 100_000


def _python_objects(loader):
    """The dataset's large lists, dicts, sets and tuples (its attributes, and those of a
    dataset it wraps), by their length only (event ``containers``): under fork, reading
    their items writes the items' reference counts, so each worker copies those pages."""
    from flake8_dlworker.testing import attribute_label

    found = []
    todo = [("dataset", getattr(loader, "dataset", None))]
    while todo and len(found) < 8:
        name, obj = todo.pop(0)
        try:
            attrs = vars(obj)
        except TypeError:
            continue
        for position, (attr, value) in enumerate(list(attrs.items())[:64]):
            path = name + attribute_label(attr, position)
            if type(value) in (list, dict, set, tuple) and len(value) >= MANY_OBJECTS:
                found.append({"path": path, "type": type(value).__name__,
                              "length": len(value)})
            elif attr in ("dataset", "datasets") and name.count(".") < 3:
                children = value if isinstance(value, (list, tuple)) else [value]
                todo.extend(("%s[%d]" % (path, i) if len(children) > 1 else path, child)
                            for i, child in enumerate(children[:8]))
    if found:
        emit("containers", key=getattr(loader, "_dlw_key", None), found=found)


#: an IterableDataset's loader compares at most this many of its batches for repeats
REPEAT_WINDOW = 2000
#: a batch is compared only when it holds at most this many bytes
_REPEAT_BYTES = 1 << 22


def _repeats(iterator, data):
    """``{counted, repeated}`` so far for an iterator whose batches are compared: how many
    were compared, and how many of them repeated one delivered before in this pass; {}
    when its batches are not compared, or stopped being (one could not be read)."""
    batches = getattr(iterator, "_dlw_batches", None)
    if batches is None:
        return {}
    if batches["counted"] < REPEAT_WINDOW:
        try:
            fingerprint = _fingerprint(data)
        except Exception:  # the count must never be why the script fails
            fingerprint = None
        if fingerprint is None:
            iterator._dlw_batches = None
            return {"counted": None}
        batches["counted"] += 1
        if fingerprint in batches["seen"]:
            batches["repeated"] += 1
        batches["seen"].add(fingerprint)
    return {"counted": batches["counted"], "repeated": batches["repeated"]}


def _fingerprint(data):
    """A digest of a batch's contents (tensors, arrays, numbers, strings and the lists,
    tuples and dicts of them), or None for a batch of anything else or a large one."""
    import hashlib

    digest = hashlib.blake2b(digest_size=16)
    budget = [_REPEAT_BYTES]
    return digest.digest() if _feed(digest, data, budget, 0) else None


def _feed(digest, obj, budget, depth):
    if depth > 6:
        return False
    torch = sys.modules.get("torch")
    numpy = sys.modules.get("numpy")
    if torch is not None and isinstance(obj, torch.Tensor):
        obj = obj.detach().cpu()
        raw = obj.contiguous().view(-1).view(torch.uint8).numpy().tobytes() \
            if obj.dim() else repr(obj.item()).encode()
        head = "tensor%s%s" % (obj.dtype, tuple(obj.shape))
    elif numpy is not None and isinstance(obj, numpy.ndarray):
        raw, head = obj.tobytes(), "array%s%s" % (obj.dtype, obj.shape)
    elif isinstance(obj, (bool, int, float, complex, str, bytes, type(None))):
        raw, head = repr(obj).encode(), type(obj).__name__
    elif isinstance(obj, (list, tuple)):
        digest.update(b"[%d" % len(obj))
        return all(_feed(digest, item, budget, depth + 1) for item in obj)
    elif isinstance(obj, dict):
        digest.update(b"{%d" % len(obj))
        return all(_feed(digest, key, budget, depth + 1)
                   and _feed(digest, value, budget, depth + 1) for key, value in obj.items())
    else:
        return False
    budget[0] -= len(raw)
    if budget[0] < 0:
        return False
    digest.update(head.encode())
    digest.update(raw)
    return True


def _dataset_changed(iterator, loader):
    """Event ``dataset_changed``: the attributes of a persistent loader's dataset that
    differ, at the start of an epoch, from what its workers received (each named once)."""
    from flake8_dlworker.testing import attribute_label

    iterator._dlw_epochs = getattr(iterator, "_dlw_epochs", 0) + 1
    sent = iterator._dlw_sent
    named = iterator.__dict__.setdefault("_dlw_named", set())
    now = attributes(loader.dataset)
    changes = []
    for name, (position, fingerprint, shown) in now.items():
        before = sent.get(name)
        if name in named or (before is not None and before[1] == fingerprint):
            continue
        named.add(name)
        changes.append({"attribute": attribute_label(name, position),
                        "before": before[2] if before is not None else None,
                        "after": shown, "added": before is None})
    if not changes:
        return
    site = _user_site()
    emit("dataset_changed", key=getattr(loader, "_dlw_key", None), path=site[0],
         line=site[1], epoch=iterator._dlw_epochs, changes=changes)


def _shuffling_distributed_sampler(loader):
    """The loader's sampler (or its batch sampler's) when it is a DistributedSampler
    that shuffles, else None."""
    module = sys.modules.get("torch.utils.data.distributed")
    if module is None:
        return None
    for sampler in (getattr(loader, "sampler", None),
                    getattr(getattr(loader, "batch_sampler", None), "sampler", None)):
        if isinstance(sampler, module.DistributedSampler) and getattr(sampler, "shuffle", False):
            return sampler
    return None


def _sampler_pass(loader):
    """Event ``sampler_epoch``, once per loader: a pass over a loader with a shuffling
    DistributedSampler began with the sampler's epoch still the one the first pass had
    (``set_epoch`` never changed it), so it repeats the first pass's order."""
    sampler = _shuffling_distributed_sampler(loader)
    if sampler is None:
        return
    epoch = getattr(sampler, "epoch", None)
    seen = loader.__dict__.get("_dlw_sampler_passes")
    if seen is None:
        loader.__dict__["_dlw_sampler_passes"] = {"passes": 1, "epoch": epoch, "done": False}
        return
    seen["passes"] += 1
    if seen["done"]:
        return
    seen["done"] = True  # each loader is named once, or cleared once
    if epoch != seen["epoch"]:
        return
    site = _user_site()
    emit("sampler_epoch", key=getattr(loader, "_dlw_key", None), path=site[0], line=site[1],
         passes=seen["passes"], epoch=epoch, seed=getattr(sampler, "seed", None))


def _nofile():
    return platforms.nofile_limit()


# -- worker exits ---------------------------------------------------------------------

def _watch(workers):
    global _watcher
    with _lock:
        for i, process in enumerate(workers):
            _watched[process.pid] = (i, process)
    if _watcher is None or not _watcher.is_alive():  # none yet, or not in a forked rank
        _watcher = threading.Thread(target=_watch_loop, name="dlw-doctor-exits", daemon=True)
        _watcher.start()


def forget_parent():
    """In a rank forked from a hooked process: the parent's workers and batches are not
    this process's."""
    with _lock:
        _watched.clear()
        _counts.clear()


def _watch_loop():
    while True:
        time.sleep(0.05)
        _poll_exits()


def _poll_exits():
    """Emit the exit of every watched worker that ended: read without reaping where the
    OS allows (torch reaps it later and must see the same), else from its Process."""
    with _lock:
        watched = list(_watched.items())
    for pid, (worker_id, process) in watched:
        try:
            if platforms.CAN_PEEK_EXITS:
                try:
                    ended = platforms.peek_exit(pid)
                except ChildProcessError:  # reaped already, or a fork server's child
                    ended = platforms.exit_of(process)
            else:
                ended = platforms.exit_of(process)
        except (OSError, ValueError):
            continue
        if ended is None:
            continue
        with _lock:
            if _watched.pop(pid, None) is None:
                continue
        how, number = ended
        if how == "exit":
            emit("exit", worker_pid=pid, worker_id=worker_id, exitcode=number, t=time.time())
        else:
            emit("exit", worker_pid=pid, worker_id=worker_id, signal=number, t=time.time())


def _ask_for_stacks(iterator):
    """Ask each live worker to print its stack (see platforms.ask_for_stacks), briefly
    wait."""
    import psutil

    from doctor.evidence import read_events

    # a worker that has not reached its loop has no handler yet: SIGUSR2 would kill it
    events = os.environ.get(EVENTS, "")
    ready = {e["pid"] for e in read_events(events) if e.get("event") == "worker_start"}
    asked = {}
    for w in getattr(iterator, "_workers", []):
        if w.pid in ready and w.exitcode is None:
            try:
                proc = psutil.Process(w.pid)
            except psutil.Error:
                continue
            path = stack_path(os.path.dirname(events), w.pid)
            before = _size(path)
            if platforms.ask_for_stacks(proc, path):
                asked[path] = before
    _wait_for_stacks(asked)


#: how long the main process waits for the workers it asked to write their stacks (a
#: busy machine may not run a sleeping worker for a while), and for a dump to end
STACKS_BOUND_S = 10.0
STACK_QUIET_S = 0.2


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _wait_for_stacks(asked):
    """Until every file in ``asked`` (path -> its size before the request) has grown and
    then stayed the same for a moment (the dump is written), within a bound."""
    deadline = time.monotonic() + STACKS_BOUND_S
    sizes = dict(asked)
    quiet_since = {}
    while sizes and time.monotonic() < deadline:
        time.sleep(0.02)
        now = time.monotonic()
        for path in list(sizes):
            size = _size(path)
            if size == asked[path]:
                continue  # not written yet
            if size != sizes[path]:
                sizes[path], quiet_since[path] = size, now
            elif now - quiet_since[path] >= STACK_QUIET_S:
                del sizes[path]
