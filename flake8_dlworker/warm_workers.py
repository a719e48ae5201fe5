"""Spawn-equivalent DataLoader workers that do not pay for ``import torch`` each time.

A spawned worker is a fresh interpreter: it imports torch (seconds), then prepares
itself as spawn prescribes (the parent's ``sys.path`` and working directory, the main
module re-imported as ``__mp_main__``) and unpickles what the loader sends it.  The
``dataloader_doctor`` fixture keeps that whole path but the first step: one private
fork server, started once per test process as a fresh interpreter (exec, not a fork of
the tests) that imports torch, numpy and pytest and nothing else, forks each worker,
and the worker then runs multiprocessing's own spawn preparation and unpickling.  So a
worker still receives everything by pickle and still finds only what a fresh process
can import; what it does not redo is those imports.

The server is started before the first check's timeout runs.  Its standard error is a
file the fixture reads, so each check still sees what its workers printed.  It is
restarted when ``os.environ`` changes (a spawned worker would see the new environment;
pytest's own ``PYTEST_CURRENT_TEST`` aside), and ends with the test process.
"""
import io
import os
import sys
import tempfile
import threading
from multiprocessing import context, forkserver, popen_forkserver, process, reduction
from multiprocessing import resource_tracker, spawn, util

#: imported once by the server (those the tests have imported), never by its workers
PRELOAD = ("numpy", "torch", "pytest")
#: set by pytest for each test phase: a change of it alone keeps the server
_VOLATILE = ("PYTEST_CURRENT_TEST",)


class _Server(forkserver.ForkServer):
    def __init__(self):
        super().__init__()
        self.log = tempfile.TemporaryFile()  # the server's and its workers' stderr
        self.environ = None

    def started(self):
        """True when the server was started for the current environment."""
        return self._forkserver_pid is not None and self.environ == _environ()

    def ensure_running(self):
        with _lock:
            environ = _environ()
            if self.environ is not None and environ != self.environ:
                self._stop()
            self.environ = environ
            self.set_forkserver_preload([m for m in PRELOAD if m in sys.modules])
            resource_tracker.ensure_running()  # shared with the tests: not with our stderr
            saved = os.dup(2)
            try:
                os.dup2(self.log.fileno(), 2)
                super().ensure_running()
            finally:
                os.dup2(saved, 2)
                os.close(saved)

    def log_size(self):
        return os.fstat(self.log.fileno()).st_size

    def log_since(self, offset):
        """What the server and its workers wrote to stderr from ``offset`` on."""
        size = self.log_size()
        if size <= offset:
            return b""
        return os.pread(self.log.fileno(), size - offset, offset)


def _environ():
    return {k: v for k, v in os.environ.items() if k not in _VOLATILE}


_lock = threading.Lock()
_server = None


def server():
    global _server
    if _server is None:
        _server = _Server()
    return _server


class _Popen(popen_forkserver.Popen):
    """multiprocessing's forkserver launch, asking the private server."""

    def _launch(self, process_obj):
        prep_data = spawn.get_preparation_data(process_obj._name)
        buf = io.BytesIO()
        context.set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            context.set_spawning_popen(None)
        self.sentinel, w = server().connect_to_new_process(self._fds)
        # the data pipe's write end, kept as the sentinel the child watches for its parent
        parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class WarmProcess(process.BaseProcess):
    _start_method = "forkserver"

    @staticmethod
    def _Popen(process_obj):
        return _Popen(process_obj)


class WarmContext(context.BaseContext):
    """A multiprocessing context whose processes come from the warm server."""
    _name = "forkserver"
    Process = WarmProcess


def _nothing():
    pass


def start():
    """Start the server, if needed, and wait until it forks: its imports are done.

    The fixture calls this before a check's timeout starts to run, so the first
    check of a session is not charged with importing torch in the server.
    """
    if server().started():
        return
    proc = WarmContext().Process(target=_nothing, daemon=True)
    proc.start()  # returns once the server, its imports done, has forked the process
    proc.join()
