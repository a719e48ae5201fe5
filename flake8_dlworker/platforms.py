"""Everything that differs by operating system, in one place.

Nothing else in the project calls an API that exists only on POSIX or only on Windows
(``tests/test_platforms.py`` reads every module to hold this).  What the OS offers is
read once, when this module is imported; each function then takes the path the OS
allows:

=====================  ==============================  =================================
need                   POSIX (Linux, macOS)            Windows
=====================  ==============================  =================================
start the target       a session of its own            a process group of its own
end the tree           SIGSTOP, then SIGKILL, to each   suspend, then terminate, each
                       member and its process group     member (psutil)
orphans                the child subreaper (Linux)      the environment token only
a worker's exit        ``waitid`` without reaping       the ``Process`` object's exitcode
a live process's       SIGUSR2 (faulthandler)           a trigger file a thread of the
stacks                                                  process watches
open-file limit        ``RLIMIT_NOFILE``                none to read
usable CPUs            the affinity mask                psutil's affinity, or cpu_count
=====================  ==============================  =================================
"""
import faulthandler
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time

try:
    import resource
except ImportError:  # Windows
    resource = None
try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

IS_WINDOWS = os.name == "nt"

_killpg = getattr(os, "killpg", None)
_getpgid = getattr(os, "getpgid", None)
_getsid = getattr(os, "getsid", None)
_setsid = getattr(os, "setsid", None)
_waitid = getattr(os, "waitid", None)
_wait_flags = (getattr(os, "WEXITED", 0) | getattr(os, "WNOHANG", 0)
               | getattr(os, "WNOWAIT", 0))
_P_PID = getattr(os, "P_PID", None)
_CLD_EXITED = getattr(os, "CLD_EXITED", None)
_WNOHANG = getattr(os, "WNOHANG", None)
_fchown = getattr(os, "fchown", None)
_fchmod = getattr(os, "fchmod", None)
_geteuid = getattr(os, "geteuid", None)
_getegid = getattr(os, "getegid", None)
_getgroups = getattr(os, "getgroups", None)
_sched_getaffinity = getattr(os, "sched_getaffinity", None)
_setitimer = getattr(signal, "setitimer", None)
_getitimer = getattr(signal, "getitimer", None)
_ITIMER_REAL = getattr(signal, "ITIMER_REAL", None)
_SIGALRM = getattr(signal, "SIGALRM", None)
_SIGCHLD = getattr(signal, "SIGCHLD", None)
_SIGSTOP = getattr(signal, "SIGSTOP", None)
_SIGKILL = getattr(signal, "SIGKILL", None)
#: the signal that ends a writer whose reader went away (``| head``); its number where
#: there is none (Windows), as shells report it: 128 + 13
SIGPIPE = getattr(signal, "SIGPIPE", 13)
_FICLONE = 0x40049409  # ioctl(dst, FICLONE, src)
_CREATE_NEW_PROCESS_GROUP = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)

#: the signal a doctor-run process answers with its stacks (None: a trigger file)
DUMP_SIGNAL = getattr(signal, "SIGUSR2", None)
#: the signal a worker under the pytest plugin answers with its stacks
TEST_DUMP_SIGNAL = getattr(signal, "SIGUSR1", None)
#: whether a worker's exit can be read without reaping it (else: its Process object)
CAN_PEEK_EXITS = _waitid is not None and _P_PID is not None
_ASK_SUFFIX = ".ask"
_ASK_POLL_S = 0.1


# -- starting and ending a tree of processes -------------------------------------------

def own_session_options():
    """``Popen`` options that start a process away from the doctor's terminal group:
    Ctrl-C in the terminal then reaches the doctor only, which ends the tree itself."""
    if _setsid is not None:
        return {"start_new_session": True}
    if IS_WINDOWS:
        return {"creationflags": _CREATE_NEW_PROCESS_GROUP}
    return {}


def clone_file(source, target):
    """A copy-on-write clone of ``source`` at ``target`` (a new file) where the file
    system makes them (Linux's FICLONE: btrfs, XFS, overlayfs on those); False where it
    cannot, and then ``target`` does not exist."""
    if fcntl is None or not sys.platform.startswith("linux"):
        return False
    try:
        with open(source, "rb") as src, open(target, "xb") as dst:
            fcntl.ioctl(dst.fileno(), _FICLONE, src.fileno())
        shutil.copystat(source, target)
        return True
    except OSError:
        try:
            os.unlink(target)
        except OSError:
            pass
        return False


def become_subreaper():
    """Orphaned descendants get re-parented to us instead of init (Linux only)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


_PROC_CHILDREN = "/proc/%d/task/%s/children"


def descendants(pids):
    """The pids of every descendant of ``pids`` (not ``pids`` themselves), read from each
    process's own list of children, at a cost that grows with the tree, not with the
    number of processes on the machine (Linux's ``/proc/PID/task/TID/children``); None
    where no such list exists, and the caller scans the process table instead."""
    if not sys.platform.startswith("linux") or not os.path.exists(
            _PROC_CHILDREN % (os.getpid(), os.getpid())):
        return None
    found = []
    seen = set(pids)
    todo = list(pids)
    while todo:
        pid = todo.pop()
        try:
            threads = os.listdir("/proc/%d/task" % pid)
        except OSError:
            continue  # gone
        for tid in threads:
            try:
                with open(_PROC_CHILDREN % (pid, tid), "rb") as handle:
                    children = handle.read().split()
            except OSError:
                continue
            for child in map(int, children):
                if child not in seen:
                    seen.add(child)
                    found.append(child)
                    todo.append(child)
    return found


def session_of(pid):
    """The session id of ``pid``, or None where sessions do not exist or it is gone."""
    if _getsid is None:
        return None
    try:
        return _getsid(pid)
    except OSError:
        return None


def groups_of(pids):
    """The process groups of ``pids`` (zombies too), never the caller's own."""
    if _getpgid is None:
        return set()
    groups = set()
    for pid in pids:
        try:
            groups.add(_getpgid(pid))
        except OSError:
            continue
    groups.discard(_getpgid(0))
    return groups


def stop_group(group):
    _signal_group(group, _SIGSTOP)


def kill_group(group):
    _signal_group(group, _SIGKILL)


def _signal_group(group, number):
    if number is None or _killpg is None:
        return
    try:
        _killpg(group, number)
    except OSError:
        pass


def stop(proc):
    """Freeze a ``psutil.Process`` so that it forks no more (SIGSTOP, or a suspend)."""
    import psutil

    try:
        if _SIGSTOP is not None:
            proc.send_signal(_SIGSTOP)
        else:
            proc.suspend()
    except (psutil.Error, OSError):
        pass


def resume(proc):
    """Let a frozen ``psutil.Process`` run again (SIGCONT, or a resume)."""
    import psutil

    try:
        proc.resume()
    except (psutil.Error, OSError):
        pass


def kill(proc):
    """End a ``psutil.Process`` at once (SIGKILL, or TerminateProcess)."""
    import psutil

    try:
        proc.kill()
    except (psutil.Error, OSError):
        pass


def reap(pid):
    """Collect the exit status of a finished child (no zombies to collect on Windows)."""
    if _WNOHANG is None:
        return
    try:
        os.waitpid(pid, _WNOHANG)
    except (ChildProcessError, OSError):
        pass


def peek_exit(pid):
    """How child ``pid`` ended, without reaping it: ``("exit", status)``,
    ``("signal", number)`` or None while it runs.  Raises ChildProcessError when it
    was reaped already.  Only where :data:`CAN_PEEK_EXITS`."""
    info = _waitid(_P_PID, pid, _wait_flags)
    if info is None:
        return None
    return ("exit" if info.si_code == _CLD_EXITED else "signal"), info.si_status


def exit_of(process):
    """How a ``multiprocessing.Process`` ended, from its own record: the portable way,
    which reaps it; None while it runs."""
    code = process.exitcode
    if code is None:
        return None
    return ("signal", -code) if code < 0 else ("exit", code)


def exit_waiter(pid):
    """A function ``wait(seconds)`` that returns when child ``pid`` has exited or the
    seconds are up, whichever comes first (a pidfd, Linux 5.3+, wakes it the moment the
    child ends; elsewhere it sleeps the seconds), and its ``close()``."""
    fd = None
    if hasattr(os, "pidfd_open"):
        try:
            fd = os.pidfd_open(pid)
        except OSError:  # an older kernel, or gone already
            fd = None
    if fd is None:
        return _Waiter(time.sleep, lambda: None)
    import select

    def wait(seconds):
        try:
            select.select([fd], [], [], seconds)
        except (OSError, ValueError):  # closed meanwhile
            time.sleep(seconds)

    return _Waiter(wait, lambda: os.close(fd))


class _Waiter:
    def __init__(self, wait, close):
        self.wait, self.close = wait, close


# -- stacks of a live process ----------------------------------------------------------

def answer_stack_requests(handle):
    """Make this process write the stacks of all its threads to ``handle`` when asked
    (see :func:`ask_for_stacks`): on SIGUSR2 where it exists, else when a trigger
    file ``<handle's name>.ask`` appears."""
    if DUMP_SIGNAL is not None:
        faulthandler.register(DUMP_SIGNAL, file=handle, all_threads=True)
        return
    trigger = handle.name + _ASK_SUFFIX

    def watch():
        while True:
            threading.Event().wait(_ASK_POLL_S)
            if os.path.exists(trigger):
                faulthandler.dump_traceback(file=handle, all_threads=True)
                handle.flush()
                try:
                    os.unlink(trigger)
                except OSError:
                    pass

    threading.Thread(target=watch, name="dlw-stack-requests", daemon=True).start()


def ask_for_stacks(proc, dump_path):
    """Ask a process that called :func:`answer_stack_requests` with a file at
    ``dump_path`` to write its stacks there; returns whether it was asked."""
    import psutil

    try:
        if DUMP_SIGNAL is not None:
            proc.send_signal(DUMP_SIGNAL)
        else:
            with open(dump_path + _ASK_SUFFIX, "w"):
                pass
        return True
    except (psutil.Error, OSError):
        return False


def ask_pid_for_stacks(pid, number=None):
    """Send ``number`` (default :data:`DUMP_SIGNAL`) to ``pid``; False where the OS has
    no such signal or the process is gone."""
    number = DUMP_SIGNAL if number is None else number
    if number is None:
        return False
    try:
        os.kill(pid, number)
        return True
    except OSError:
        return False


def answer_test_stack_requests(handle):
    """The pytest plugin's workers: their stacks on SIGUSR1, where it exists."""
    if TEST_DUMP_SIGNAL is None:
        return False
    faulthandler.register(TEST_DUMP_SIGNAL, file=handle, all_threads=True)
    return True


# -- a time limit in the main thread, and quiet child signals ---------------------------

def start_alarm(seconds, on_alarm):
    """Call ``on_alarm(signum, frame)`` in the main thread after ``seconds``; returns what
    :func:`cancel_alarm` needs, or None where no alarm can be set (Windows, another
    thread, or an alarm already set by someone else, such as pytest-timeout)."""
    if (_setitimer is None or _SIGALRM is None
            or threading.current_thread() is not threading.main_thread()
            or _getitimer(_ITIMER_REAL)[0] != 0):
        return None
    previous = signal.signal(_SIGALRM, on_alarm)
    _setitimer(_ITIMER_REAL, max(seconds, 0.001))
    return previous


def cancel_alarm(previous):
    _setitimer(_ITIMER_REAL, 0)
    signal.signal(_SIGALRM, previous)


def default_child_signal():
    """Put SIGCHLD back to its default (in the main thread); returns the handler to
    restore, or None where there is no SIGCHLD or this is not the main thread."""
    if _SIGCHLD is None or threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(_SIGCHLD, signal.SIG_DFL)


def restore_child_signal(previous):
    signal.signal(_SIGCHLD, previous)


# -- files: opening untrusted paths, owners, who may read them ---------------------------

#: ``os.open`` flags to read a path someone else named: never block on a FIFO or a
#: device, never take a terminal, bytes as they are (Windows)
UNTRUSTED_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                        | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0))
#: the same, and the last part of the path must not be a symbolic link
UNTRUSTED_READ_NO_LINK_FLAGS = UNTRUSTED_READ_FLAGS | getattr(os, "O_NOFOLLOW", 0)


def copy_owner_and_mode(fd, like):
    """Give the open file ``fd`` the owner and mode of ``like`` (an ``os.stat`` result).
    Raises PermissionError when the owner cannot be kept; Windows has neither."""
    if _fchown is not None:
        info = os.fstat(fd)
        if (like.st_uid, like.st_gid) != (info.st_uid, info.st_gid):
            _fchown(fd, like.st_uid, like.st_gid)
    if _fchmod is not None:
        _fchmod(fd, stat.S_IMODE(like.st_mode))


def readable_by_owner_bits(info):
    """Whether the mode bits of a file (``os.stat`` result) let this user read it,
    whatever root's capabilities allow; True where there are no such bits (Windows)."""
    if _geteuid is None:
        return True
    if info.st_uid == _geteuid():
        return bool(info.st_mode & stat.S_IRUSR)
    if info.st_gid == _getegid() or info.st_gid in _getgroups():
        return bool(info.st_mode & stat.S_IRGRP)
    return bool(info.st_mode & stat.S_IROTH)


# -- host facts -------------------------------------------------------------------------

def usable_cpus(cgroup_root="/sys/fs/cgroup"):
    """CPUs this process may run on: its affinity mask where the OS has one, fewer where
    a cgroup's CPU quota allows less (a container's ``--cpus``, a Kubernetes limit)."""
    mask = _affinity_cpus()
    quota = cgroup_cpus(cgroup_root)
    return min(mask, quota) if quota else mask


#: (quota file, period file) of cgroup v2 ("max 100000" or "150000 100000" in one file),
#: then of cgroup v1's cpu controller, whose "no quota" is -1
_CPU_QUOTA = (("cpu.max", None), ("cpu/cpu.cfs_quota_us", "cpu/cpu.cfs_period_us"),
              ("cpu,cpuacct/cpu.cfs_quota_us", "cpu,cpuacct/cpu.cfs_period_us"))


def cgroup_cpus(root="/sys/fs/cgroup"):
    """The CPUs a cgroup's quota gives (quota / period, rounded up), or None without one."""
    for quota_file, period_file in _CPU_QUOTA:
        try:
            with open(os.path.join(root, quota_file)) as handle:
                fields = handle.read().split()
            if period_file is not None:
                with open(os.path.join(root, period_file)) as handle:
                    fields += handle.read().split()
            quota, period = int(fields[0]), int(fields[1])
        except (OSError, ValueError, IndexError):
            continue  # "max": no quota; a file that is not there: another layout
        if quota > 0 and period > 0:
            return max(1, -(-quota // period))
        return None
    return None


def _affinity_cpus():
    if _sched_getaffinity is not None:
        return len(_sched_getaffinity(0))
    try:
        import psutil
    except ImportError:
        return os.cpu_count() or 1
    try:  # Windows; macOS has no affinity at all
        return len(psutil.Process().cpu_affinity()) or os.cpu_count() or 1
    except (AttributeError, psutil.Error):
        return os.cpu_count() or 1


def shm_gb(path="/dev/shm"):
    """(size, used) of the shared-memory filesystem in GiB, or None where there is none."""
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    total = st.f_blocks * st.f_frsize
    gib = 1024 ** 3
    return total / gib, (st.f_blocks - st.f_bfree) * st.f_frsize / gib


def nofile_limit():
    """The soft limit on open file descriptors, or None where there is none to read."""
    if resource is None:
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft
