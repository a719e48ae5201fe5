"""Run the project's code as it runs on Windows, on this machine.

A ``sitecustomize`` put first on PYTHONPATH reaches every process of a run (the doctor,
the target, its spawned workers, pytest).  It removes the POSIX-only names from
``os`` and ``signal`` and hides the ``resource`` module, imports
:mod:`flake8_dlworker.platforms` (which reads what the OS offers once, at import),
then puts the names back.  The platform layer thus takes its Windows paths everywhere,
and ``tests/test_platforms.py`` holds that no other module of the project touches
those names; Python's own modules, psutil and torch keep their real POSIX paths, since
they do run on Linux here.  Each process appends its pid to the file named by
``DLW_WINDOWS_LIKE_LOG``, so that a test can see the layer was in place.
"""
import os
from pathlib import Path

from test_platforms import ONLY_SOME

WINDOWS_HAS = {"O_BINARY", "startfile", "CTRL_C_EVENT", "CTRL_BREAK_EVENT", "SIGBREAK",
               "CREATE_NEW_PROCESS_GROUP", "STARTUPINFO", "CREATE_NO_WINDOW", "windll",
               "WinDLL", "CDLL"}

SITECUSTOMIZE = '''\
import faulthandler, multiprocessing, os, signal, stat, subprocess, sys, threading

_hidden = []
for _module, _names in ((os, {os_names!r}), (signal, {signal_names!r})):
    for _name in _names:
        if hasattr(_module, _name):
            _hidden.append((_module, _name, getattr(_module, _name)))
            delattr(_module, _name)
_resource = sys.modules.get("resource")
sys.modules["resource"] = None
try:
    import flake8_dlworker.platforms as _platforms
finally:
    for _module, _name, _value in _hidden:
        setattr(_module, _name, _value)
    if _resource is None:
        del sys.modules["resource"]
    else:
        sys.modules["resource"] = _resource
assert _platforms.DUMP_SIGNAL is None and not _platforms.CAN_PEEK_EXITS
assert _platforms.resource is None and _platforms.own_session_options() == {{}}
with open(os.environ["DLW_WINDOWS_LIKE_LOG"], "a") as _log:
    _log.write("%d %s\\n" % (os.getpid(), " ".join(sys.argv)[:80]))
'''


def environment(folder):
    """Environment variables that make every Python process started with them run the
    platform layer's Windows paths; the log of those processes is ``folder/pids``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE.format(
        os_names=sorted(ONLY_SOME["os"] - WINDOWS_HAS),
        signal_names=sorted(ONLY_SOME["signal"] - WINDOWS_HAS)))
    path = [str(folder)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])
    return {"PYTHONPATH": os.pathsep.join(path), "DLW_WINDOWS_LIKE_LOG": str(folder / "pids")}


def processes(folder):
    """The processes that ran with the Windows paths: [(pid, command)]."""
    path = Path(folder) / "pids"
    if not path.exists():
        return []
    return [tuple(line.split(" ", 1)) for line in path.read_text().splitlines()]
