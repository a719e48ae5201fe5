"""Every crashing fixture really crashes under a forced spawn start method, with the
runtime error its rule names, and every clean fixture runs to the end."""
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fixture_markers import FIXTURES, expected_findings, fixture_files

SPAWN_RUN = str(Path(__file__).resolve().parent / "spawn_run.py")

#: what each rule's crash prints (parent or child side), any one of them
CRASH_TEXT = {
    "DLW101": ("has finished its bootstrapping phase",),
    "DLW102": ("Can't pickle local object", "Can't get local object",
               "Can't pickle <function <lambda>", "PicklingError"),
    "DLW103": ("Can't pickle local object", "Can't get local object", "PicklingError"),
    "DLW104": ("Can't get attribute", "has no attribute"),
}
#: fixtures whose crash is a hang: the pool respawns each worker that dies bootstrapping
HANGS = {"dlw101_pool.py": 20}


def run_spawned(args, cwd, timeout):
    """Run under spawn in its own session; on timeout end the whole process group."""
    proc = subprocess.Popen([sys.executable, SPAWN_RUN, *args], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        timed_out = True
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # workers the script left behind
        except ProcessLookupError:
            pass
    return proc.returncode, timed_out, out + err


def _cases():
    for path in fixture_files():
        if path.name == "__main__.py":
            yield pytest.param(["-m", path.parent.name], path, id=path.parent.name)
        else:
            yield pytest.param([path.name], path, id=path.name)


@pytest.mark.parametrize("args, path", list(_cases()))
def test_fixture_behaves_under_spawn(args, path):
    codes = {code for _, _, code in expected_findings(path)}
    cwd = FIXTURES if args[0] == "-m" else path.parent
    limit = HANGS.get(path.name, 120)
    rc, timed_out, output = run_spawned(args, cwd, limit)
    if not codes:
        assert (rc, timed_out) == (0, False), output[-3000:]
        return
    (code,) = codes
    if path.name in HANGS:
        assert timed_out, "expected the run to hang\n" + output[-3000:]
    else:
        assert not timed_out and rc != 0, output[-3000:]
    assert any(text in output for text in CRASH_TEXT[code]), output[-3000:]
