"""The worker side: what each DataLoader worker runs before torch's own worker loop.

The main process replaces ``torch.utils.data._utils.worker._worker_loop`` with
:func:`worker_loop`, which pickles by reference, so every spawned worker imports
this module, answers requests for its stacks (asked for on a hang), keeps the
faulthandler stack after torch installs its own SIGSEGV/SIGBUS handlers, says who it
is, and then runs the real loop. A worker of an IterableDataset, one of two or more,
also notes whether it ever asks for its worker info and whether the loader's
``worker_init_fn`` changed its copy of the dataset, and says so when its loop ends
(event ``stream``): one that did neither yields the whole stream, as every other does.
"""
import faulthandler
import os
import sys

from doctor.agent import emit, line_buffered, stack_file
from doctor.agent.attributes import dataset_state
from flake8_dlworker import platforms

#: the real loop, when this module was patched in before a fork (then it is inherited)
original = None


def worker_loop(*args, **kwargs):
    from torch.utils.data._utils import signal_handling
    from torch.utils.data._utils import worker as torch_worker

    real_set = signal_handling._set_worker_signal_handlers

    def set_handlers(*a, **k):
        # faulthandler (on by PYTHONFAULTHANDLER) must be installed after torch's
        # handlers to chain to them: it prints the Python stack, then torch its line.
        # enable() does not reinstall when already on, hence disable() first.
        faulthandler.disable()
        real_set(*a, **k)
        faulthandler.enable(all_threads=True)

    signal_handling._set_worker_signal_handlers = set_handlers
    line_buffered(sys.stdout)
    dump_to = stack_file()
    if dump_to is not None:
        platforms.answer_stack_requests(dump_to)
    worker_id = _argument(args, kwargs, "worker_id")
    emit("worker_start", worker_id=worker_id, parent=os.getppid())
    loop = original or torch_worker._worker_loop
    stream = None
    try:
        stream = _Stream.of(args, kwargs)
        if stream is not None:
            args, kwargs = stream.watch(args, kwargs)
    except Exception as exc:  # the watch must never be why the worker fails
        emit("stream_error", error="%s: %s" % (type(exc).__name__, exc))
    try:
        return loop(*args, **kwargs)
    finally:
        if stream is not None:
            stream.report(worker_id)


#: torch's ``_worker_loop`` parameters, in order
_PARAMETERS = ("dataset_kind", "dataset", "index_queue", "data_queue", "done_event",
               "auto_collation", "collate_fn", "drop_last", "base_seed", "init_fn",
               "worker_id", "num_workers", "persistent_workers", "shared_seed")


def _argument(args, kwargs, name):
    at = _PARAMETERS.index(name)
    return args[at] if len(args) > at else kwargs.get(name)


def _with_argument(args, kwargs, name, value):
    at = _PARAMETERS.index(name)
    if len(args) > at:
        return args[:at] + (value,) + args[at + 1:], kwargs
    return args, dict(kwargs, **{name: value})


def _asking_for_worker_info():
    """``get_worker_info``'s body, noting that code outside torch called it (torch's own
    collate asks too). It runs as torch's own function, with its module's globals, so
    every name bound to the function counts, however it was imported."""
    global _dlw_asked
    if not __import__("sys")._getframe(1).f_code.co_filename.startswith(
            _dlw_torch_dir):  # noqa: F821
        _dlw_asked = True
    return _worker_info  # noqa: F821


class _Stream:
    """One worker of an IterableDataset with several workers: did it ask for its worker
    info, and did the loader's ``worker_init_fn`` change its copy of the dataset?"""

    def __init__(self, dataset, num_workers, init_fn):
        self.dataset = dataset
        self.num_workers = num_workers
        self.init_fn = init_fn
        self.init_changed = None

    @classmethod
    def of(cls, args, kwargs):
        from torch.utils.data.dataloader import _DatasetKind

        num_workers = _argument(args, kwargs, "num_workers") or 0
        if _argument(args, kwargs, "dataset_kind") != _DatasetKind.Iterable or num_workers < 2:
            return None
        return cls(_argument(args, kwargs, "dataset"), num_workers,
                   _argument(args, kwargs, "init_fn"))

    def watch(self, args, kwargs):
        from torch.utils.data._utils import worker as torch_worker

        import torch

        torch_worker._dlw_torch_dir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
        torch_worker._dlw_asked = False  # a forked worker inherits its parent's answer
        torch_worker.get_worker_info.__code__ = _asking_for_worker_info.__code__
        if self.init_fn is None:
            return args, kwargs
        real, stream = self.init_fn, self

        def init_fn(worker_id):
            before = dataset_state(stream.dataset)
            real(worker_id)
            stream.init_changed = dataset_state(stream.dataset) != before

        return _with_argument(args, kwargs, "init_fn", init_fn)

    def report(self, worker_id):
        from torch.utils.data._utils import worker as torch_worker

        cls = type(self.dataset)
        where = getattr(getattr(cls, "__iter__", None), "__code__", None)
        emit("stream", worker_id=worker_id, num_workers=self.num_workers,
             asked=bool(getattr(torch_worker, "_dlw_asked", False)),
             init_fn=self.init_fn is not None, init_changed=self.init_changed,
             dataset=cls.__qualname__,
             iter_path=where.co_filename if where is not None else None,
             iter_line=where.co_firstlineno if where is not None else None)
