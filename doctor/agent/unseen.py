"""Keep the doctor out of what the script shows: its tracebacks and its warnings.

The hooks wrap torch's methods, and the target runs under ``doctor.agent.boot`` and
runpy, so a traceback would hold frames of the doctor's own files and a warning raised
with ``stacklevel=2`` would name a line of the hooks. Here, in the target's main process:

- the uncaught exception (of the main thread or another) is printed without the
  doctor's frames and without the frames above the target (boot, runpy), as ``python
  train.py`` prints it (with ``DLW_DOCTOR_DEBUG`` set, whole: to debug the doctor);
- ``warnings.warn`` counts no frame of the doctor's files in ``stacklevel``, so a
  warning names the line it would name without the doctor.
"""
import os
import sys
import threading
import warnings

#: the doctor package's folder: a frame whose file lies under it is the doctor's own
DOCTOR_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
#: set, the doctor's frames are shown (its own failure, debugged)
DEBUG = "DLW_DOCTOR_DEBUG"
_RUNPY = ("<frozen runpy>", os.path.join(os.path.dirname(os.__file__), "runpy.py"))


def install():
    """Hook uncaught exceptions (main thread and others) and ``warnings.warn``."""
    hook, thread_hook, real_warn = sys.excepthook, threading.excepthook, warnings.warn

    def excepthook(kind, value, tb):
        hook(kind, value, clean(value, tb))

    def threading_excepthook(args):
        clean(args.exc_value, args.exc_traceback)  # its head is threading's own frame
        thread_hook(args)

    def warn(message, category=None, stacklevel=1, source=None, **more):
        return real_warn(message, category, _level(sys._getframe(1), stacklevel), source,
                         **more)

    sys.excepthook = excepthook
    threading.excepthook = threading_excepthook
    warnings.warn = warn


def own(filename):
    """Whether a frame of ``filename`` is the doctor's own code."""
    return filename.startswith(DOCTOR_DIR)


def clean(value, tb):
    """``tb`` without the doctor's frames, and every exception chained to ``value``
    cleaned the same way (their ``__traceback__`` relinked in place)."""
    head = visible(tb)
    seen = {id(value)}
    chained = [getattr(value, "__cause__", None), getattr(value, "__context__", None)]
    while chained:
        exc = chained.pop()
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        exc.__traceback__ = visible(exc.__traceback__)
        chained += [exc.__cause__, exc.__context__]
    if value is not None and value.__traceback__ is tb:
        value.__traceback__ = head
    return head


def visible(tb):
    """The head of ``tb`` relinked without the doctor's frames and the runpy frames
    before the target's first one; ``tb`` itself when nothing would be left, or to
    debug the doctor."""
    if tb is None or os.environ.get(DEBUG):
        return tb
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    kept = [entry for entry in entries if not own(_file(entry))]
    while kept and _file(kept[0]) in _RUNPY:
        kept.pop(0)
    if not kept:
        return entries[0]
    for outer, inner in zip(kept, kept[1:]):
        outer.tb_next = inner
    kept[-1].tb_next = None
    return kept[0]


def _file(entry):
    return entry.tb_frame.f_code.co_filename


def _level(frame, stacklevel):
    """The ``stacklevel`` for the real ``warnings.warn`` called one frame below
    ``frame`` (the caller's): the same frame as ``stacklevel`` names, counting none of
    the doctor's own frames on the way out. The caller itself counts as it is."""
    depth, left = 1, max(1, stacklevel) - 1
    while left and frame.f_back is not None:
        frame = frame.f_back
        depth += 1
        if not own(frame.f_code.co_filename):
            left -= 1
    if left:  # fewer frames than asked for: as the real warn would say
        return stacklevel + 1
    return depth + 1
