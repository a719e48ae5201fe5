"""Every crashing fixture really crashes under a forced spawn start method, with the
runtime error its rule names; the fixtures of rules that do not crash (DLW105,
DLW109, DLW110, DLW111) run to the end and show the misbehaviour; every clean
fixture runs to the end."""
import ast
import functools
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
    # DataLoader.__init__ (torch/utils/data/dataloader.py)
    "DLW106": ("persistent_workers option needs num_workers > 0",
               "prefetch_factor option could only be specified in multiprocessing"),
    # worker side: fork after the parent used CUDA; on a CPU-only torch the first CUDA
    # call in the worker fails instead (torch/cuda/__init__.py _lazy_init)
    "DLW107": ("Cannot re-initialize CUDA in forked subprocess",
               "Torch not compiled with CUDA enabled", "Found no NVIDIA driver"),
    # the parent's pickling error; a torch.Generator fails in the child (pytorch#146828)
    "DLW108": ("cannot pickle", "unable to resize file"),
}
#: fixtures whose crash is a hang: the pool respawns each worker that dies bootstrapping
HANGS = {"dlw101_pool.py": 20}


def _duplicated_samples(output):
    samples = _printed(output, "samples:")
    return len(samples) > len(set(samples))


def _same_draws_in_every_worker(output):
    draws = _printed(output, "draws:")
    streams = list(draws.values())
    return len(streams) >= 2 and all(stream == streams[0] for stream in streams)


def _too_many_workers_warning(output):
    if len(os.sched_getaffinity(0)) >= 64:
        pytest.skip("this host can run 64 workers: torch has nothing to warn about")
    return "This DataLoader will create 64 worker processes in total" in output


def _pinned_without_harm_here(output):
    # the harm, page-locked RAM running out, needs a small host with an accelerator;
    # here the fixture only shows that the loader was asked to pin (torch warns when it
    # finds no accelerator to pin for)
    return "'pin_memory' argument is set as true" in output or _cuda_available()


#: rules whose fixtures do not crash: what each run must show instead
MISBEHAVES = {
    "DLW109": _duplicated_samples,
    "DLW111": _same_draws_in_every_worker,
    "DLW110": _too_many_workers_warning,
    "DLW105": _pinned_without_harm_here,
}


def _printed(output, label):
    """The Python literal a fixture printed after ``label``."""
    for line in output.splitlines():
        if line.startswith(label):
            return ast.literal_eval(line[len(label):].strip())
    raise AssertionError("no %r line in the output:\n%s" % (label, output[-3000:]))


@functools.lru_cache(maxsize=None)
def _cuda_available():
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.is_available())"],
                         capture_output=True, text=True)
    return out.stdout.strip() == "True"


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
    if code in MISBEHAVES:
        assert (rc, timed_out) == (0, False), output[-3000:]
        assert MISBEHAVES[code](output), output[-3000:]
        return
    if code == "DLW107" and _cuda_available():
        pytest.skip("under spawn a CUDA host runs this, one CUDA context per worker")
    if path.name in HANGS:
        assert timed_out, "expected the run to hang\n" + output[-3000:]
    else:
        assert not timed_out and rc != 0, output[-3000:]
    assert any(text in output for text in CRASH_TEXT[code]), output[-3000:]
