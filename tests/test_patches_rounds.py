"""The combined fix: patches from the run's evidence, composed into one diff that
``git apply`` takes, re-run in rounds; each patched script then runs under a real
spawn start method and prints what it prints when nothing breaks."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.patches import fixed_source, maker
from doctor.patches.combine import map_line
from doctor.patches.sites import from_probe
from fixture_markers import FIXTURES, find, fixture_files, modules_beside
from tiers import run_python, starts_torch
from flake8_dlworker import catalog
from flake8_dlworker.catalog import RULES

#: the codes whose cause folder holds a patch maker
CODES = catalog.having("patch")

ROOT = Path(__file__).resolve().parents[1]
SPAWN_RUN = ROOT / "tests" / "spawn_run.py"


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@starts_torch
def _doctor(args, cwd):
    run = subprocess.run([sys.executable, "-m", "doctor", *args], cwd=cwd, text=True,
                         capture_output=True, env=_env(), timeout=600)
    return run, (json.loads(run.stdout) if "--json" in args and run.stdout.strip() else None)


def _copy(tmp_path, fixture):
    """The example or fixture called ``fixture`` and the modules it imports beside it."""
    script = tmp_path / Path(fixture).name
    shutil.copy(find(fixture), script)
    for beside in modules_beside(find(fixture)):
        shutil.copy(beside, tmp_path / beside.name)
    return script


def _git_apply(patch, cwd):
    done = subprocess.run(["git", "apply", "-"], input=patch, text=True, cwd=cwd,
                          capture_output=True)
    assert done.returncode == 0, done.stderr


@starts_torch
def _spawn_output(name, cwd):
    """The script's own stdout under a real spawn start method; it must exit 0."""
    run = subprocess.run([sys.executable, str(SPAWN_RUN), name], cwd=cwd, text=True,
                         capture_output=True, env=_env(), timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def _fixed_rounds(report):
    return [r for r in report["fix"]["rounds"] if r["fixed"]]


@pytest.mark.e2e  # the fast tier keeps this real fix round
def test_two_causes_one_patch_and_apply_converges(tmp_path):
    """A lambda and no guard: one round fixes both, the re-run passes, --apply writes
    the same text that the reported diff gives with git apply."""
    script = _copy(tmp_path, "multi_lambda_unguarded.py")
    pristine = tmp_path / "pristine"
    pristine.mkdir()
    shutil.copy(script, pristine / script.name)
    run, report = _doctor(["--json", "--apply", "--timeout", "120", script.name], tmp_path)
    assert [d["code"] for d in report["diagnoses"]] == ["DLW102", "DLW101"], run.stderr[-3000:]
    fix = report["fix"]
    assert fix["verified"] is True and fix["files"] == [script.name]
    assert [(r["round"], r["diagnoses"]) for r in fix["rounds"]] == [
        (1, ["DLW102", "DLW101"]), (2, [])]
    assert fix["rounds"][1]["outcome"] in ("passed", "stopped") and not fix["rounds"][1]["fixed"]
    assert len(_fixed_rounds(report)) == 1
    assert all(d["verified"] for d in report["diagnoses"])
    assert "doctor: wrote %s (backup: %s.orig)" % (script.name, script.name) in run.stderr
    _git_apply(fix["patch"], pristine)
    assert (pristine / script.name).read_text() == script.read_text()
    assert _spawn_output(script.name, tmp_path) == "total 120.0\n"


def test_three_causes_one_patch_passes_under_spawn(tmp_path):
    script = _copy(tmp_path, "multi_three_causes.py")
    imports = script.read_text().count("import")
    run, report = _doctor(["--json", "--verify", "--timeout", "120", script.name], tmp_path)
    fix = report["fix"]
    assert fix["verified"] is True, run.stderr[-3000:]
    assert fix["rounds"][0]["diagnoses"] == ["DLW102", "DLW103", "DLW101"]
    assert len(_fixed_rounds(report)) == 1 and len(fix["rounds"]) == 2
    assert fix["patch"].count("--- a/") == 1  # one diff, one file
    assert "# stack the samples as floats" in fix["patch"]  # the comment moved with it
    _git_apply(fix["patch"], tmp_path)
    assert _spawn_output(script.name, tmp_path) == "total 280.0\n"
    assert script.read_text().count("import") == imports  # nothing imported twice


def test_lambda_only_the_run_sees_is_patched_from_the_probe(tmp_path):
    """The checker is silent (the lambda is looked up in a dict); the probe names its
    line and column, and the patch lifts that lambda, not its neighbour."""
    script = _copy(tmp_path, "dlw102_transform_table.py")
    lint = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "DLW",
                           script.name], cwd=tmp_path, capture_output=True, text=True)
    assert lint.stdout == ""
    run, report = _doctor(["--json", "--timeout", "120", script.name], tmp_path)
    (diag,) = report["diagnoses"]
    assert (diag["code"], diag["line"]) == ("DLW102", 6), run.stderr[-3000:]
    assert diag["patch"] == report["fix"]["patch"]
    assert '+TRANSFORMS = {"double": _double, "same": lambda x: x}' in diag["patch"]
    _git_apply(report["fix"]["patch"], tmp_path)
    assert _spawn_output(script.name, tmp_path) == "total 280.0\n"


def test_h5py_dataset_taken_from_the_file_is_reopened(tmp_path):
    """The patch that dropped the file but kept ``self.tokens`` (an h5py dataset)
    failed in the worker; the file and what was taken from it are reopened."""
    pytest.importorskip("h5py")
    script = _copy(tmp_path, "dlw108_h5py_dataset.py")
    run, report = _doctor(["--json", "--timeout", "120", script.name], tmp_path)
    patch = report["fix"]["patch"]
    assert "+        state['tokens'] = None  # taken from self.h5" in patch, run.stderr[-3000:]
    assert '+        self.h5 = h5py.File(self.path, "r")' in patch
    _git_apply(patch, tmp_path)
    assert _spawn_output(script.name, tmp_path) == "total 496\n"


def test_lightning_datamodule_collate_gets_values_not_self(tmp_path):
    """``partial(_collate, self=self)`` reached the worker without its keywords (the
    DataModule holds the Trainer, which holds the loader); the values it reads go."""
    pytest.importorskip("pytorch_lightning")
    script = _copy(tmp_path, "dlw102_lightning_datamodule.py")
    run, report = _doctor(["--json", "--timeout", "180", script.name], tmp_path)
    patch = report["fix"]["patch"]
    assert "functools.partial(_collate, scale=self.scale)" in patch, run.stderr[-3000:]
    assert "self=self" not in patch
    _git_apply(patch, tmp_path)
    assert _spawn_output(script.name, tmp_path).strip().splitlines()[-1] == "steps 4"


@pytest.mark.parametrize("fixture, prints", [
    # the loader is built in a sibling module, which the checker of this file alone
    # cannot follow; the run sees the workers start from unguarded code
    ("dlw101_sibling_factory.py", "6.0\n22.0\n38.0\n54.0\n"),
    # only the run shows the cause (a worker out of file descriptors)
    ("dlw204_nofile.py", "400\n"),
    # only the run sees that the worker_init_fn (an object) never splits the stream: each
    # worker now yields its share, every sample once
    ("dlw109_seeding_callable.py", "samples: [0, 1, 2, 3, 4, 5]\n"),
])
def test_runtime_only_fix_applies_and_passes_under_spawn(tmp_path, fixture, prints):
    """Fixable crashes with no static finding in the file: the patch comes from the
    run's evidence, ``git apply`` takes it, and the script prints its own output."""
    script = _copy(tmp_path, fixture)
    run, report = _doctor(["--json", "--timeout", "120", script.name], tmp_path)
    assert report and report["fix"]["patch"], run.stderr[-3000:]
    _git_apply(report["fix"]["patch"], tmp_path)
    assert _spawn_output(script.name, tmp_path) == prints


def test_check_fix_writes_every_static_patch_without_running(tmp_path):
    script = _copy(tmp_path, "multi_three_causes.py")
    run, _ = _doctor(["check", "--fix", script.name], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stderr.startswith("doctor: fixed %s: " % script.name)
    lint = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "DLW",
                           script.name], cwd=tmp_path, capture_output=True, text=True)
    assert lint.stdout == ""
    again, _ = _doctor(["check", "--fix", script.name], tmp_path)
    assert (again.returncode, again.stderr) == (0, "")
    assert _spawn_output(script.name, tmp_path) == "total 280.0\n"


def test_a_package_run_with_dash_m_gets_a_fix_that_creates_a_module(tmp_path):
    """``python -m dlw104_pkg``: the run's combined fix moves the dataset out of
    __main__.py into a new ``data.py`` (a diff that creates it); ``check --fix`` writes
    both files, the new one first, and the package then runs under spawn."""
    shutil.copytree(FIXTURES / "dlw104_pkg", tmp_path / "dlw104_pkg")
    run, report = _doctor(["--json", "--timeout", "180", "-m", "dlw104_pkg"], tmp_path)
    assert [d["code"] for d in report["diagnoses"]][:1] == ["DLW104"], run.stderr[-3000:]
    assert report["fix"]["files"] == ["dlw104_pkg/__main__.py", "dlw104_pkg/data.py"]
    assert "--- /dev/null\n+++ b/dlw104_pkg/data.py\n" in report["fix"]["patch"]
    assert not (tmp_path / "dlw104_pkg" / "data.py").exists()  # nothing written
    fixed, _ = _doctor(["check", "--fix", "dlw104_pkg/__main__.py"], tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stderr.splitlines()[0] == "doctor: wrote dlw104_pkg/data.py (a new file)"
    assert (tmp_path / "dlw104_pkg" / "__main__.py.orig").is_file()
    assert "class Numbers(Dataset):" in (tmp_path / "dlw104_pkg" / "data.py").read_text()
    spawned = run_python([str(SPAWN_RUN), "-m", "dlw104_pkg"], cwd=tmp_path,
                         capture_output=True, text=True, env=_env(), timeout=600)
    assert (spawned.returncode, spawned.stdout) == (0, "6.0\n22.0\n38.0\n54.0\n"), \
        spawned.stderr[-3000:]


def test_max_rounds_must_be_a_positive_number(tmp_path):
    script = _copy(tmp_path, "multi_lambda_unguarded.py")
    run, _ = _doctor(["--verify", "--max-rounds", "0", script.name], tmp_path)
    assert run.returncode == 2
    assert run.stderr.strip() == "doctor: error: argument --max-rounds: must be 1 or more"


def test_sites_outside_the_project_are_never_patched(tmp_path, monkeypatch):
    import torch.utils.data as data

    monkeypatch.chdir(tmp_path)
    inside = _copy(tmp_path, "dlw102_transform_table.py")
    outside = tmp_path.parent / "elsewhere.py"
    outside.write_text("f = lambda x: x\n")
    culprit = {"code": "DLW102", "line": 6, "path": "dataset.transform"}
    assert from_probe(dict(culprit, file=str(inside))).path == str(inside)
    assert from_probe(dict(culprit, file=str(outside))) is None
    assert from_probe(dict(culprit, file=data.__file__)) is None  # an installed package
    handle = {"code": "DLW108", "path": "dataset.h5", "owner_file": data.__file__,
              "owner_line": 1}
    assert from_probe(handle) is None


def maker_cases(code):
    """(before, after) of each of the maker's own cases (``causes/<CODE>/patches/``)."""
    facts = getattr(maker(code), "FACTS", None)
    for path in RULES[code].example_paths("patches"):
        before = Path(path).read_text(encoding="utf-8")
        yield before, fixed_source(code, path, before, None, facts)


def test_no_pickling_patch_turns_workers_off():
    """A pickling cause is fixed in the code, never by num_workers=0."""
    for code in ("DLW102", "DLW103", "DLW104", "DLW108"):
        for before, after in maker_cases(code):
            assert "num_workers=0" not in after.replace(before, "")
    for path in fixture_files():
        code = path.name.split("_")[0].upper()
        if code in ("DLW102", "DLW103", "DLW104", "DLW108") and code in CODES:
            new = fixed_source(code, str(path), path.read_text())
            added = [line for line in (new or "").splitlines()
                     if line not in path.read_text().splitlines()]
            assert not [line for line in added if re.search(r"num_workers\s*=\s*0\b", line)], \
                path.name


def test_lines_are_followed_through_earlier_edits():
    old = "a\nb\nc\nd\n"
    new = "x\ny\na\nb\nC\nd\n"
    assert [map_line(old, new, n) for n in (1, 2, 3, 4)] == [3, 4, 5, 6]
    assert map_line(old, "a\nd\n", 2) is None
