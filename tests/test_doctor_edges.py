"""Smaller edges of the doctor's command line, each reproduced by real means: a reader
that goes away (``| head -1``), a long stream of stderr lines, the script's stdin.
The scripts here import no torch, so the real doctor runs them in the fast tier."""
import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from doctor_run import TOKEN, doctor_command, end_leftovers, leftovers
import needs

pytestmark = needs.posix

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATIENCE_S = 300


def _env(token):
    return dict(os.environ, PYTHONPATH=ROOT, **{TOKEN: token})


def _gone_within(token, bound_s):
    deadline = time.monotonic() + bound_s
    while leftovers(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not leftovers(token)


def test_a_reader_that_goes_away_stops_the_run_quietly(tmp_path):
    """``python -m doctor loud.py | head -1``: the doctor ends the script as the broken
    pipe would have, prints no error and exits 128 + SIGPIPE."""
    (tmp_path / "loud.py").write_text(textwrap.dedent("""\
        import itertools
        for n in itertools.count():
            print("line", n, flush=True)
    """))
    token = uuid.uuid4().hex
    head = subprocess.Popen([sys.executable, "-m", "doctor", "loud.py"], cwd=str(tmp_path),
                            env=_env(token), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert head.stdout.readline().startswith(b"line 0")
        head.stdout.close()  # what head does after its first line
        err = head.stderr.read().decode("utf-8", "replace")
        status = head.wait(timeout=PATIENCE_S)
    finally:
        if head.poll() is None:
            head.kill()
        ended = _gone_within(token, 30)
        end_leftovers(token)
    assert status == 128 + signal.SIGPIPE, err[-3000:]
    assert "Traceback" not in err and "error" not in err, err[-3000:]
    assert ended, "the script was left running"


def _cpu_seconds(command, cwd, **kwargs):
    """(CPU seconds that ``command`` and the processes it waited for used, its result)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(command, cwd=str(cwd), env=_env(uuid.uuid4().hex),
                            stdin=subprocess.DEVNULL, timeout=PATIENCE_S, **kwargs)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return used, result


def test_half_a_million_stderr_lines_cost_the_doctor_little(tmp_path):
    """Every line passes through and is parsed, in blocks: the doctor's CPU time stays
    within twice the script's own plus its fixed start (it was five times the script's:
    one parser call per line). CPU time, not wall time: a busy machine slows both."""
    (tmp_path / "noisy.py").write_text(textwrap.dedent("""\
        import sys
        for i in range(500000):
            print("epoch 1 step %d loss 0.25" % i, file=sys.stderr)
    """))
    plain, _ = _cpu_seconds([sys.executable, "noisy.py"], tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    doctor, result = _cpu_seconds([sys.executable, "-m", "doctor", "noisy.py"], tmp_path,
                                  capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stderr.count("epoch 1 step") == 500000
    assert doctor < 2 * plain + 3.0, (doctor, plain)


def test_a_dead_kernel_names_its_cell_counted_from_one(tmp_path):
    """Every message counts cells from 1 (``cell 3``), the kernel's death too."""
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_markdown_cell("# notes"),
                  nbformat.v4.new_code_cell("x = 1"),
                  nbformat.v4.new_code_cell("import os\nos._exit(1)")]
    nbformat.write(book, str(tmp_path / "nb.ipynb"))
    status, _, out, err, left = doctor_command(["nb.ipynb"], str(tmp_path), limit=PATIENCE_S)
    assert not left, left
    assert "the kernel died while it ran cell 3\n" in err, err[-3000:]
