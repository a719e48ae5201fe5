"""The doctor's command line: bad input, the target's own view of the world, stopping
early, ending the tree on Ctrl-C or when the script kills itself, and the report."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from doctor_run import TOKEN, doctor_command, run_doctor
from fixture_markers import example_env, find
from tiers import starts_torch

LOADER = textwrap.dedent("""\
    import os, sys
    import torch
    from torch.utils.data import DataLoader, TensorDataset


    def main():
        print("argv", sys.argv[1:], "path0", os.path.basename(sys.path[0]),
              "cwd", os.path.basename(os.getcwd()), flush=True)
        loader = DataLoader(TensorDataset(torch.arange(64.0)), batch_size=2, num_workers=2)
        for epoch in range(100):
            for batch in loader:
                pass


    if __name__ == "__main__":
        main()
""")


@pytest.mark.parametrize("args, message", [
    (["missing.py"], "missing.py: no such file"),
    (["."], "is a directory"),
    (["data.bin"], "is a binary file"),
    (["broken.py"], "broken.py:1: not valid Python"),
    (["--start-method", "thread", "x.py"], "invalid choice"),
    (["--timeout", "soon", "x.py"], "is not a number"),
    (["--frobnicate", "x.py"], "unrecognized arguments"),
    ([], "give a SCRIPT or -m MODULE"),
    (["-m", "no_such_module_here"], "no module named no_such_module_here"),
    (["explain", "missing.log"], "missing.log"),
    (["explain", "-"], "-: the log is empty"),
    (["check", "missing.py"], "missing.py: no such file"),
])
def test_bad_input_is_one_line_and_status_2(tmp_path, args, message):
    (tmp_path / "data.bin").write_bytes(b"\x7fELF\x00\x01\x02\x00" * 32)
    (tmp_path / "broken.py").write_text("def f(:\n")
    status, _report, out, err, left = doctor_command(args, tmp_path, limit=300)
    assert status == 2, err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err, err
    assert out == "" and not left


def test_help_explains_the_commands(tmp_path):
    status, _report, out, _err, _left = doctor_command(["--help"], tmp_path, limit=300)
    assert status == 0
    for word in ("explain", "check", "--start-method", "--timeout", "--max-batches", "-m",
                 "-v, --verbose", "--report FILE", "summary"):
        assert word in out


def test_max_batches_stops_with_the_scripts_argv_path_and_cwd(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "train.py").write_text(LOADER)
    status, report, _out, err, left = run_doctor(
        ["--json", "--max-batches", "3", "../train.py", "--epochs", "1"], work)
    assert not left
    assert (status, report["outcome"], report["diagnoses"]) == (0, "stopped", []), err
    # the script's own output reached the user (on stderr with --json), unchanged
    assert "argv ['--epochs', '1'] path0 %s cwd work" % tmp_path.name in err


ABORTS_AT_EXIT = textwrap.dedent("""
    import multiprocessing.util
    import os

    import torch
    from torch.utils.data import DataLoader, Dataset


    def abort_at_exit(worker_id):
        # run by the worker's own exit (multiprocessing's finalizers): a real SIGABRT
        multiprocessing.util.Finalize(None, os.abort, exitpriority=100)


    class Squares(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            return torch.tensor(float(i * i))


    if __name__ == "__main__":
        for batch in DataLoader(Squares(), batch_size=2, num_workers=2,
                                worker_init_fn=abort_at_exit):
            print(batch.tolist())
""")


@pytest.mark.parametrize("stop", [True, False])
def test_a_worker_that_aborts_in_the_shutdown_of_a_stopped_run_is_no_crash(tmp_path, stop):
    """--max-batches ends the script early; a worker that aborts as it is shut down then
    is part of that shutdown (a note says so). In a run to the end the same abort counts."""
    (tmp_path / "train.py").write_text(ABORTS_AT_EXIT)
    args = ["--json"] + (["--max-batches", "1"] if stop else []) + ["train.py"]
    status, report, _out, err, left = run_doctor(args, tmp_path)
    assert not left
    assert "Fatal Python error: Aborted" in err  # the worker really aborted
    if stop:
        assert (status, report["outcome"], report["diagnoses"]) == (0, "stopped", []), err
        assert any(note.startswith("Fatal Python error: Aborted in a process while the "
                                   "doctor stopped the run") for note in report["notes"])
    else:
        assert status == 1 and report["diagnoses"][0]["code"] == "DLW203", report


def test_module_target_runs_like_python_dash_m(tmp_path):
    pkg = tmp_path / "trainpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "run.py").write_text(LOADER)
    status, report, _out, err, left = run_doctor(
        ["--json", "--max-batches", "2", "-m", "trainpkg.run", "a"], tmp_path)
    assert (status, report["outcome"], report["target"]) == (0, "stopped", "trainpkg.run"), err
    assert "argv ['a']" in err and not left


def test_script_that_kills_itself_leaves_no_worker(tmp_path):
    script = LOADER.replace(
        "        for batch in loader:\n            pass",
        "        for i, batch in enumerate(loader):\n"
        "            if i == 3:\n"
        "                os.kill(os.getpid(), 9)")
    assert "os.kill" in script
    (tmp_path / "train.py").write_text(script)
    status, report, _out, err, left = run_doctor(["--json", "train.py"], tmp_path)
    assert not left
    assert report["outcome"] == "crashed" and report["exit_code"] == 137, err
    assert status == 1 and report["diagnoses"][0]["code"] == "DLW208"


def test_terminal_report_has_no_colour_off_a_tty(tmp_path):
    (tmp_path / "train.py").write_text(LOADER.replace("num_workers=2", "num_workers=2, "
                                                      "collate_fn=lambda b: b"))
    status, _report, out, err, left = run_doctor(["train.py"], tmp_path)
    assert status == 1 and not left
    assert "DLW102" in out and "\x1b[" not in out and "\x1b[" not in err


@starts_torch
def _run_on_a_tty(args, cwd, env_extra, size=None):
    """Run the doctor with stdout and stderr on a real pseudo-terminal (``size``: its
    (rows, columns), set as a terminal sets it); all it wrote."""
    import fcntl
    import pty
    import struct
    import termios

    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(env_extra)
    main, child = pty.openpty()
    if size is not None:
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
        env.update(LINES=str(size[0]), COLUMNS=str(size[1]))
    proc = subprocess.Popen([sys.executable, "-m", "doctor", *args], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=child, stderr=child)
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # the terminal closed: every writer is gone
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=600)
    os.close(main)
    return proc.returncode, b"".join(chunks).decode("utf-8", "replace")


def last_screen(text, rows=40, columns=120):
    """The rows a ``rows`` x ``columns`` terminal shows when ``text`` stops: colours
    dropped, a ``\\r`` line (the live status) as overwritten, long lines wrapped."""
    import re

    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r\n", "\n")
    screen = []
    for line in plain.split("\n"):
        line = line.rsplit("\r", 1)[-1]
        screen.extend([line[i:i + columns] for i in range(0, len(line), columns)] or [""])
    return screen[-rows:]


LAMBDA = LOADER.replace("num_workers=2", "num_workers=2, collate_fn=lambda b: b")


def test_on_a_tty_status_line_and_colour(tmp_path):
    (tmp_path / "train.py").write_text(LAMBDA)
    status, text = _run_on_a_tty(["train.py"], tmp_path, {TOKEN: "tty-%d" % os.getpid()})
    assert status == 1
    assert "doctor: " in text and " processes  peak worker RSS " in text  # live status
    assert "\x1b[1;31mDLW102" in text  # the cause in colour


def test_no_color_is_respected_on_a_tty(tmp_path):
    (tmp_path / "train.py").write_text(LAMBDA)
    status, text = _run_on_a_tty(["train.py"], tmp_path, {"NO_COLOR": "1"})
    assert status == 1 and "DLW102" in text
    assert "\x1b[1;31m" not in text and "\x1b[0m" not in text


#: one-cause fixtures: (program, its root cause, the line the report names)
ONE_CAUSE = [("dlw102_collate.py", "DLW102", 8), ("dlw101_loop.py", "DLW101", 7),
             ("dlw103_nested_collate.py", "DLW103", 11),
             ("dlw104_guard_dataset.py", "DLW104", 13), ("dlw108_open_file.py", "DLW108", 7)]


@pytest.mark.parametrize("name, code, line", ONE_CAUSE)
def test_the_last_screen_of_a_120x40_terminal_names_the_cause_and_the_fix(name, code, line):
    """What stays on a terminal when the run ends: the root cause's code and file:line,
    and the fix, in its last 40 rows; the doctor's own files nowhere in the output."""
    path = find(name)
    env = {TOKEN: "screen-%d" % os.getpid(), "PYTHONPATH": example_env()["PYTHONPATH"]}
    status, text = _run_on_a_tty([name], path.parent, env, size=(40, 120))
    assert status == 1, text[-3000:]
    screen = "\n".join(last_screen(text))
    summary = screen[screen.rindex("summary"):]
    assert "%s " % code in summary and "%s:%d" % (name, line) in summary, screen
    assert "  fix: python -m doctor --apply %s" % name in summary, screen
    assert "full report: -v shows" in summary
    for own in ("/doctor/", "doctor/agent"):
        assert own not in text, text[max(0, text.find(own) - 2000):text.find(own) + 500]


def test_report_file_holds_the_json_beside_the_full_terminal_report(tmp_path):
    """Off a terminal the report is full (the diff, the chart), then the summary names
    the file that --report wrote: the same object --json prints."""
    (tmp_path / "train.py").write_text(LAMBDA)
    status, _report, out, err, left = run_doctor(["--report", "out.json", "train.py"],
                                                 tmp_path)
    assert status == 1 and not left, err[-2000:]
    written = json.loads((tmp_path / "out.json").read_text())
    assert written["diagnoses"][0]["code"] == "DLW102" and "memory" in written
    assert "+def _collate(b):" in out and "memory (RSS" in out
    assert out.rstrip("\n").splitlines()[-3:] == [
        "  DLW102 lambda reaches a DataLoader worker at train.py:9 (root cause, certain)",
        "  fix: python -m doctor --apply train.py",
        "  full report: out.json (JSON, written by --report)"]


def test_json_has_exactly_the_specified_keys(tmp_path):
    (tmp_path / "train.py").write_text(LAMBDA)
    status, report, _out, err, left = run_doctor(
        ["--json", "--start-method", "forkserver", "train.py"], tmp_path)
    assert status == 1 and not left, err[-2000:]
    assert set(report) == {"schema", "target", "start_method", "outcome", "exit_code", "notes",
                           "diagnoses", "host", "fix", "memory", "payload"}
    assert set(report["fix"]) == {"patch", "verified", "files", "rounds"}
    assert report["fix"]["verified"] is None  # not re-run without --verify
    assert (report["target"], report["start_method"], report["outcome"]) == (
        "train.py", "forkserver", "crashed")
    assert set(report["host"]) == {"os", "python", "torch", "cuda", "cpus", "ram_gb",
                                   "shm_gb", "nofile_limit"}
    (first, *_rest) = report["diagnoses"]
    assert set(first) == {"code", "title", "confidence", "explanation", "evidence", "path",
                          "line", "patch", "verified"}
    assert (first["code"], first["path"], first["line"], first["verified"]) == (
        "DLW102", "train.py", 9, None)
    assert "under forkserver" in " ".join(first["evidence"])
