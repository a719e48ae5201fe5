"""Thread stacks in a dump (faulthandler, or py-spy read into faulthandler's form by
:mod:`doctor.logparse`): which thread of a DataLoader is stuck, and where.

A dump is taken of a program that hangs; what it shows decides whether the DataLoader is
the part that hangs.  A worker is stuck when its stack runs the user's code (dataset,
transform, collate) and the innermost frame waits (a lock, a queue, a pipe, a sleep, a
CUDA call), py-spy says the thread is idle in it, or the main process waits for a batch
meanwhile; a worker waiting for its next index
in ``_worker_loop`` with no user frame is merely idle.  The pin-memory thread is stuck
when its stack is inside ``pin_memory``.  With no worker's stack in the log, a main
process that waits in the DataLoader for a batch is what the dump shows of the hang.
"""
import re
from dataclasses import dataclass, field
from typing import List, Optional

_HEADER = re.compile(r"^(?:Current thread|Thread) (?P<id>\S+)(?: \((?P<state>[\w+]+)\))?"
                     r'(?: "(?P<name>[^"]*)")?')
_FRAME = re.compile(r'^\s+File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<func>.*)$')
#: innermost frames that wait for something
BLOCKING = frozenset((
    "acquire", "wait", "wait_for", "get", "put", "join", "recv", "recv_bytes", "_recv",
    "_recv_bytes", "recv_into", "poll", "_poll", "select", "sleep", "_wait_for_tstate_lock",
    "readinto", "read", "readline", "accept", "connect", "create_connection", "synchronize",
    "_lazy_init", "flock", "lockf", "result", "send", "sendall", "_send", "_send_bytes",
    "urlopen", "getresponse", "communicate"))


@dataclass
class Thread:
    header: str
    name: Optional[str]
    state: Optional[str]        # py-spy's idle / active / active+gil; None from faulthandler
    frames: List[tuple] = field(default_factory=list)   # (path, line, func), innermost first
    process: str = ""           # the py-spy process line, or the dump's first line

    def funcs(self):
        return [f[2] for f in self.frames]

    def text(self):
        return "\n".join([self.header] + ['  File "%s", line %d in %s' % f for f in self.frames])


@dataclass
class Stuck:
    kind: str                   # "worker" | "pin memory thread"
    thread: Thread
    frame: Optional[tuple]      # the user's frame where it waits (path, line)
    watchdog: bool              # faulthandler's dump_traceback_later fired
    other_threads: List[str] = field(default_factory=list)  # named threads of the parent


def threads(stack):
    """The threads of one dump, in the order printed."""
    found = []
    process = stack.split("\n", 1)[0]
    for line in stack.split("\n"):
        if line.startswith("py-spy dump of process"):
            process = line
            continue
        head = _HEADER.match(line)
        if head:
            found.append(Thread(line.rstrip(": "), head["name"], head["state"], process=process))
            continue
        frame = _FRAME.match(line)
        if frame and found:
            found[-1].frames.append((frame["path"], int(frame["line"]), frame["func"].strip()))
    return found


def stuck_thread(stacks, is_library, main_waiting=True):
    """The first stuck DataLoader thread in the dumps (not fatal-error dumps), or None;
    ``main_waiting``: a main process waiting for a batch counts when no worker is seen."""
    parents = [_parent_threads(threads(s), is_library) for s in stacks]
    parents = [name for names in parents for name in names]
    dumps = [s for s in stacks if not s.startswith("Fatal Python error")]
    main_waits = any({"_try_get_data", "_get_data"} & set(t.funcs())
                     for s in dumps for t in threads(s))
    for stack in dumps:
        watchdog = stack.startswith("Timeout (")
        spy = stack.startswith("py-spy dump")
        all_threads = threads(stack)
        for thread in all_threads:
            funcs = thread.funcs()
            user = next(((p, n) for p, n, _ in thread.frames if not is_library(p)), None)
            if "_worker_loop" in funcs and user is not None:
                waits = (_waits(thread) or thread.state == "idle" or not spy or main_waits)
                if waits:
                    return Stuck("worker", thread, user, watchdog, parents)
            if "_pin_memory_loop" in funcs and "pin_memory" in funcs:
                return Stuck("pin memory thread", thread, _loop_frame(all_threads, is_library),
                             watchdog)
    for stack in dumps if main_waiting else ():  # the main process waits for a batch
        for thread in threads(stack):
            if {"_try_get_data", "_get_data"} & set(thread.funcs()):
                user = next(((p, n) for p, n, _ in thread.frames if not is_library(p)), None)
                return Stuck("main process (waiting for a batch)", thread, user,
                             stack.startswith("Timeout ("))
    return None


#: native frames (py-spy --native) of a thread that waits
_NATIVE_WAIT = re.compile(r"(?i)cuda|nccl|futex|pthread_cond|pthread_mutex|sem_wait|"
                          r"sched_yield|poll|select|recv|read")


def _waits(thread):
    """The innermost Python frame is a waiting call, or a native frame below it waits."""
    for path, _, func in thread.frames:
        if not path.startswith("<native "):
            return func in BLOCKING or "cuda" in path.lower()
        if _NATIVE_WAIT.search(path + " " + func):
            return True
    return False


def _loop_frame(all_threads, is_library):
    """The user's frame of the thread that iterates the DataLoader (the main thread)."""
    for thread in all_threads:
        if "_next_data" in thread.funcs() or "__next__" in thread.funcs():
            for path, line, _ in thread.frames:
                if not is_library(path):
                    return path, line
    return None


def _parent_threads(all_threads, is_library):
    """The other threads of a process that iterates a DataLoader: a py-spy dump's names;
    faulthandler names none, so there a thread that runs the user's code is named by its
    innermost frame of that code (``flush_stats at train.py:17``)."""
    names = []
    for thread in all_threads:
        funcs = thread.funcs()
        if "_next_data" in funcs or "__next__" in funcs or "_worker_loop" in funcs \
                or "_pin_memory_loop" in funcs or "QueueFeederThread" in (thread.name or ""):
            continue
        name = thread.name if thread.name != "MainThread" else None
        if name is None and not thread.name:
            user = next(((p, n, f) for p, n, f in thread.frames
                         if not is_library(p) and not _doctor_frame(p)), None)
            if user is not None:
                name = "%s at %s:%d" % (user[2], user[0], user[1])
        if name and name not in names:
            names.append(name)
    parents = [t for t in all_threads if "_next_data" in t.funcs() or "__next__" in t.funcs()]
    return names if parents else []


def _doctor_frame(path):
    """A frame of the doctor's own agent, which runs inside the target: not the user's."""
    return re.search(r"[\\/]doctor[\\/]agent[\\/]", path) is not None
