"""The doctor's command line: bad input, the target's own view of the world, stopping
early, ending the tree on Ctrl-C or when the script kills itself, and the report."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from doctor_run import TOKEN, leftovers, run_doctor

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
    (["check", "missing.py"], "missing.py: no such file"),
])
def test_bad_input_is_one_line_and_status_2(tmp_path, args, message):
    (tmp_path / "data.bin").write_bytes(b"\x7fELF\x00\x01\x02\x00" * 32)
    (tmp_path / "broken.py").write_text("def f(:\n")
    status, _report, out, err, left = run_doctor(args, tmp_path, limit=60)
    assert status == 2, err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err, err
    assert out == "" and not left


def test_help_explains_the_commands(tmp_path):
    status, _report, out, _err, _left = run_doctor(["--help"], tmp_path, limit=60)
    assert status == 0
    for word in ("explain", "check", "--start-method", "--timeout", "--max-batches", "-m"):
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


def test_ctrl_c_ends_the_tree_and_still_reports(tmp_path):
    (tmp_path / "train.py").write_text(LOADER)
    token = "ctrl-c-%d" % os.getpid()
    env = dict(os.environ, **{TOKEN: token})
    proc = subprocess.Popen([sys.executable, "-m", "doctor", "--json", "train.py"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(leftovers(token)) < 4:
        time.sleep(0.2)  # the doctor, the target and its two workers
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    left = leftovers(token)
    for p in left:
        p.kill()
    assert not left
    assert '"outcome": "stopped"' in out, err[-2000:]


def test_terminal_report_has_no_colour_off_a_tty(tmp_path):
    (tmp_path / "train.py").write_text(LOADER.replace("num_workers=2", "num_workers=2, "
                                                      "collate_fn=lambda b: b"))
    status, _report, out, err, left = run_doctor(["train.py"], tmp_path)
    assert status == 1 and not left
    assert "DLW102" in out and "\x1b[" not in out and "\x1b[" not in err
