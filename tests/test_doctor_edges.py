"""Smaller edges of the doctor's command line, each reproduced by real means: a reader
that goes away (``| head -1``), a long stream of stderr lines, the script's stdin.
The scripts here import no torch, so the real doctor runs them in the fast tier, but for
the script that deletes itself."""
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from doctor_run import TOKEN, doctor_command, end_leftovers, leftovers, run_doctor
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


def test_half_a_million_stderr_lines_all_pass_through(tmp_path):
    """Every line passes through, in order, though the doctor parses them in blocks (what
    that costs against the plain script: bench/stderr_bench.py)."""
    (tmp_path / "noisy.py").write_text(textwrap.dedent("""\
        import sys
        for i in range(500000):
            print("epoch 1 step %d loss 0.25" % i, file=sys.stderr)
    """))
    result = subprocess.run([sys.executable, "-m", "doctor", "noisy.py"], cwd=str(tmp_path),
                            env=_env(uuid.uuid4().hex), stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=PATIENCE_S)
    assert result.returncode == 0, result.stderr[-3000:]
    steps = [line for line in result.stderr.splitlines() if line.startswith("epoch 1 step")]
    assert steps == ["epoch 1 step %d loss 0.25" % i for i in range(500000)]


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


SELF_DELETING = textwrap.dedent("""\
    import os

    from torch.utils.data import DataLoader


    def main():
        os.remove(os.path.abspath(__file__))  # a script that cleans up after itself
        for batch in DataLoader(list(range(8)), batch_size=2, num_workers=2):
            print(batch)


    if __name__ == "__main__":
        main()
""")


def test_a_script_that_deletes_itself_is_not_said_to_print_no_traceback(tmp_path):
    """Spawned workers re-import the script, which is gone: they print a traceback and
    exit 1. The report quotes that error instead of saying none was printed."""
    (tmp_path / "gone.py").write_text(SELF_DELETING)
    status, report, _out, err, left = run_doctor(["--json", "gone.py"], tmp_path,
                                                 limit=PATIENCE_S)
    assert not left and status == 1, err[-3000:]
    assert "FileNotFoundError" in err
    (first,) = report["diagnoses"][:1]
    text = " ".join(first["evidence"])
    assert "printed no traceback" not in text, first
    assert "FileNotFoundError: [Errno 2] No such file or directory" in text, first
