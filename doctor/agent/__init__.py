"""Code that runs inside the target and its workers, and writes events for the doctor.

Every process of the run appends JSON lines to the file named by ``DLW_DOCTOR_EVENTS``
(one ``os.write`` per event on an ``O_APPEND`` descriptor, so lines from several
processes never interleave).  Nothing here prints: the target's output stays its own.
"""
import json
import os

EVENTS = "DLW_DOCTOR_EVENTS"
START_METHOD = "DLW_DOCTOR_START_METHOD"
MAX_BATCHES = "DLW_DOCTOR_MAX_BATCHES"
#: START_METHOD's value under --compare: force nothing, watch the script's own method
OWN = "own"
#: the rank a process belongs to, as JSON ({"rank", "local_rank", "node", "host"}, and
#: "nodes", how many the job has, under a launcher): set by
#: :mod:`doctor.agent.startup` in a rank's main process, inherited by its workers, and
#: added to every event they write
RANK = "DLW_DOCTOR_RANK"

_fd = None
_fd_pid = None
_labels = None


def rank_labels():
    """This process's rank labels (a dict), or {} outside a distributed run."""
    global _labels
    if _labels is None:
        try:
            _labels = json.loads(os.environ.get(RANK) or "{}")
        except ValueError:
            _labels = {}
        if not isinstance(_labels, dict):
            _labels = {}
    return _labels


def set_rank_labels(labels):
    """Label this process, and the processes it starts, with ``labels``."""
    global _labels
    _labels = dict(labels)
    os.environ[RANK] = json.dumps(_labels)


def emit(event, **fields):
    """Append one event; silently nothing when the doctor is not running us."""
    global _fd, _fd_pid
    path = os.environ.get(EVENTS)
    if not path:
        return
    pid = os.getpid()
    if _fd is None or _fd_pid != pid:  # a forked child opens its own descriptor
        try:
            _fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError:
            return
        _fd_pid = pid
    fields["event"] = event
    fields["pid"] = pid
    for key, value in rank_labels().items():
        fields.setdefault(key, value)
    try:
        os.write(_fd, (json.dumps(fields, default=str) + "\n").encode("utf-8"))
    except OSError:
        pass


_stack_files = []  # kept open for faulthandler, which writes to their descriptors


def stack_path(folder, pid):
    """Where process ``pid`` of a run writes its stacks when asked."""
    return os.path.join(folder, "stack-%d.txt" % pid)


def stack_file():
    """This process's file for stack dumps asked for (SIGUSR2 or a trigger file, see
    :mod:`flake8_dlworker.platforms`), beside the events: one file per process, so that
    dumps of several processes never interleave."""
    path = os.environ.get(EVENTS)
    if not path:
        return None
    try:
        handle = open(stack_path(os.path.dirname(path), os.getpid()), "w")
    except OSError:
        return None
    _stack_files.append(handle)
    return handle


def line_buffered(stream):
    """Each line the script prints reaches the doctor (and the user) at once, in one
    write: stdout is block-buffered into a pipe otherwise. stderr is line-buffered
    already (Python 3.9+)."""
    try:
        stream.reconfigure(line_buffering=True)
    except (AttributeError, ValueError):
        pass


def own_start_method():
    """The start method new processes get now, read without fixing it (as
    ``multiprocessing.get_start_method()`` would, which would stop the script from
    choosing its own later): the one set, else the platform's default."""
    import multiprocessing

    return (multiprocessing.get_start_method(allow_none=True)
            or multiprocessing.get_all_start_methods()[0])
