"""Every process of one run, found by three marks, and ended so that none escapes.

A process belongs to the run when it descends from the target (or was re-parented to
the doctor, the child subreaper on Linux), when it sits in the target's session, or
when its environment carries the run's token.  A process that calls ``setsid()`` and
forks again leaves the session and, once its parent dies, the tree; the token follows
it through ``fork`` and ``exec`` unless it clears its own environment.

Ending the tree first stops every member (``SIGSTOP``), so that nothing forks while it
is looked for, looks again until no new member appears, then kills them all, and
repeats until no member is alive or the bound expires. Signals go to each member's
process group as well as to the member: a process that keeps re-forking (a new pid
every few milliseconds) stays in its group, and a zombie it left behind (ours to reap,
as the subreaper) still names that group, so the group signal reaches its newest pid.

Before that, a run's multiprocessing resource tracker outlives the rest for a moment:
once the last process that could write to it is gone, it unlinks the named semaphores
and shared memory that the killed processes left in ``/dev/shm``, which nothing else
would remove.
"""
import os
import time

import psutil

from flake8_dlworker import platforms

#: the environment variable that marks every process of a run
TOKEN = "DLW_DOCTOR_RUN"
#: how long a resource tracker gets to clean up after the rest of the run is gone
TRACKER_GRACE_S = 3.0
#: what multiprocessing.resource_tracker runs as (``python -c '...import main;main(fd)'``)
TRACKER_COMMAND = "from multiprocessing.resource_tracker import main"


class ProcessTree:
    def __init__(self, root_pid, token, spare=()):
        self.root_pid = root_pid
        self.token = token
        #: processes of the doctor's own that are no member (the keeper, doctor.keeper)
        self.spare = set(spare)
        self.session = platforms.session_of(root_pid)
        #: whether a resource tracker cleaned up after processes this tree killed (it
        #: warns of "leaked" objects then: theirs, not the script's)
        self.tracker_cleaned_up = False

    # -- who is in it ----------------------------------------------------------------
    def members(self, by_environment=True, zombies=False):
        """The run's live processes (and zombies, if asked), the doctor itself never."""
        found = {}
        own = os.getpid()
        try:
            root = psutil.Process(self.root_pid)
            found[root.pid] = root
            for proc in root.children(recursive=True):
                found[proc.pid] = proc
        except psutil.Error:
            pass
        try:  # orphans re-parented to the doctor, the subreaper
            for proc in psutil.Process(own).children(recursive=True):
                found.setdefault(proc.pid, proc)
        except psutil.Error:
            pass
        if by_environment or self.session is not None:
            for proc in psutil.process_iter():
                if proc.pid in found or proc.pid == own:
                    continue
                if (self.session is not None
                        and platforms.session_of(proc.pid) == self.session):
                    found[proc.pid] = proc
                elif by_environment and self._carries_token(proc):
                    found[proc.pid] = proc
        found.pop(own, None)
        for pid in self.spare:
            found.pop(pid, None)
        return list(found.values()) if zombies else [p for p in found.values() if alive(p)]

    def _carries_token(self, proc):
        try:
            return proc.environ().get(TOKEN) == self.token
        except (psutil.Error, OSError):
            return False

    # -- ending it -------------------------------------------------------------------
    def end(self, bound_s=10.0):
        """Kill every member; returns the members still alive when the bound expired."""
        deadline = time.monotonic() + bound_s
        if not self._end_all_but_trackers(deadline):
            # the first look found no process of the run, not even a zombie: none is left
            # that could start another, so there is nothing to end (the common case
            # after a run that ended on its own)
            return []
        while True:
            members, groups, _seen = self._stop_all(deadline)
            for group in groups:
                platforms.kill_group(group)
            for proc in members:
                platforms.kill(proc)
            self._wait_gone(members, deadline)
            reap_children(exclude=self.root_pid)
            left = self.members()
            if not left or time.monotonic() >= deadline:
                return left

    def _end_all_but_trackers(self, deadline):
        """Kill every member but the resource trackers, then let those go on until they
        have read the end of their pipe, cleaned up and exited (or the grace is over).
        Whether any process of the run was found."""
        members, groups, seen = self._stop_all(deadline)
        trackers = [p for p in members if _is_resource_tracker(p)]
        if not trackers:
            return seen
        others = [p for p in members if p not in trackers]
        self.tracker_cleaned_up = bool(others)
        for proc in others:
            platforms.kill(proc)
        self._wait_gone(others, deadline)
        for proc in trackers:
            platforms.resume(proc)
        self._wait_gone(trackers, min(deadline, time.monotonic() + TRACKER_GRACE_S))
        return True

    def _stop_all(self, deadline):
        """Stop members and their groups until a look finds no new one; returns all of
        them, their groups, and whether any look found a process (a zombie too)."""
        stopped, groups, seen = {}, set(), False
        while True:
            found = self.members(zombies=True)
            seen = seen or bool(found)
            fresh = [p for p in found if p.pid not in stopped]
            for group in platforms.groups_of(p.pid for p in fresh) - groups:
                platforms.stop_group(group)
                groups.add(group)
            fresh = [p for p in fresh if alive(p)]
            if not fresh:
                return list(stopped.values()), groups, seen
            for proc in fresh:
                platforms.stop(proc)
                stopped[proc.pid] = proc
            if time.monotonic() >= deadline:
                return list(stopped.values()), groups, seen

    @staticmethod
    def _wait_gone(members, deadline):
        while time.monotonic() < deadline and any(alive(p) for p in members):
            time.sleep(0.01)


def alive(proc):
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _is_resource_tracker(proc):
    try:
        return TRACKER_COMMAND in " ".join(proc.cmdline())
    except psutil.Error:
        return False


def describe(proc):
    try:
        return "pid %d (%s)" % (proc.pid, " ".join(proc.cmdline())[:120] or proc.name())
    except psutil.Error:
        return "pid %d" % proc.pid


def reap_children(exclude=None):
    """Collect the exit status of finished children that are not ``exclude`` (whose
    status belongs to its ``Popen``)."""
    try:
        children = psutil.Process().children()
    except psutil.Error:
        return
    for child in children:
        if child.pid != exclude:
            platforms.reap(child.pid)
