"""The worker side: what each DataLoader worker runs before torch's own worker loop.

The main process replaces ``torch.utils.data._utils.worker._worker_loop`` with
:func:`worker_loop`, which pickles by reference, so every spawned worker imports
this module, answers requests for its stacks (asked for on a hang), keeps the
faulthandler stack after torch installs its own SIGSEGV/SIGBUS handlers, says who it
is, and then runs the real loop.
"""
import faulthandler
import os
import sys

from doctor.agent import emit, line_buffered, stack_file
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
    worker_id = args[10] if len(args) > 10 else kwargs.get("worker_id")
    emit("worker_start", worker_id=worker_id, parent=os.getppid())
    loop = original or torch_worker._worker_loop
    return loop(*args, **kwargs)
