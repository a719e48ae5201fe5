"""The share of crashing fixtures that the doctor's combined fix makes run under spawn.

For each fixture (one folder copy each): the reference output is the script's own
stdout under ``fork`` (Linux's default, where the pickling causes do not crash); the
doctor runs it under spawn (``--json``, with ``--verify`` when asked: rounds of fix and
re-run); a crash whose first diagnosis has a patch maker counts as fixable, unless the
run showed that no change of the maker's kind avoids it (a worker killed with memory to
spare: fewer workers would not help). Its combined patch (``fix.patch``) is applied with
``git apply`` and the patched script run under a real spawn start method
(``tests/spawn_run.py``): fixed when it exits 0 and prints what the reference printed
(any output when the reference itself fails).

    python bench/fix_share.py [--verify] [--jobs 2] [FIXTURE ...]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPAWN_RUN = ROOT / "tests" / "spawn_run.py"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from fixture_markers import find, modules_beside, run_files, short  # noqa: E402
from doctor.diagnose import MEMORY_UNEXPLAINED  # noqa: E402
from flake8_dlworker import catalog  # noqa: E402

#: causes whose catalog fix is a code change that a maker could make
FIXABLE = set(catalog.having("patch"))
TIMEOUT = 240


def fixtures():
    """Every crashing program: the named INVALID examples and the fixtures."""
    return [p for p in run_files() if p.parent.name not in ("valid", "notebooks")
            and not p.name.startswith("clean_") and p.name != "loaders_beside.py"]


def _target(path, folder):
    """Copy the fixture, and the modules beside it that it imports, into ``folder``."""
    if path.name == "__main__.py":
        shutil.copytree(path.parent, folder / path.parent.name)
        return ["-m", path.parent.name]
    shutil.copy(path, folder / path.name)
    for beside in modules_beside(path):
        shutil.copy(beside, folder / beside.name)
    return [path.name]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run(cmd, cwd):
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT,
                              env=_env(), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None
    return done


def measure(path, verify):
    name = short(path)
    with tempfile.TemporaryDirectory(prefix="fix-share-") as tmp:
        folder = Path(tmp)
        target = _target(path, folder)
        reference = _run([sys.executable, *target], folder)
        args = ["--json", "--timeout", "90"] + (["--verify"] if verify else [])
        doctor = _run([sys.executable, "-m", "doctor", *args, *target], folder)
        if doctor is None or not doctor.stdout.strip():
            return name, None, "doctor gave no report"
        report = json.loads(doctor.stdout)
        # stopped: the doctor ended a run whose processes kept dying at start (no
        # --max-batches here, no signal)
        ended = report["outcome"] in ("crashed", "timeout", "stopped")
        if not ended or not report["diagnoses"]:
            return name, None, "does not crash under spawn"
        code = report["diagnoses"][0]["code"]
        if code not in FIXABLE:
            return name, None, "%s: no code change fixes it" % code
        if any(line.startswith(MEMORY_UNEXPLAINED) for line in report["diagnoses"][0]["evidence"]):
            return name, None, "%s: %s" % (code, MEMORY_UNEXPLAINED)
        patch = (report.get("fix") or {}).get("patch")
        if not patch:
            return name, False, "%s: no patch" % code
        applied = subprocess.run(["git", "apply", "-"], input=patch, text=True, cwd=folder,
                                 capture_output=True)
        if applied.returncode:
            return name, False, "%s: git apply failed: %s" % (code, applied.stderr.strip())
        patched = _run([sys.executable, str(SPAWN_RUN), *target], folder)
        if patched is None:
            return name, False, "%s: the patched script timed out" % code
        if patched.returncode:
            last = (patched.stderr.strip().splitlines() or ["?"])[-1]
            return name, False, "%s: the patched script failed: %s" % (code, last)
        if reference is not None and reference.returncode == 0:
            if patched.stdout != reference.stdout:
                return name, False, "%s: output differs from the script's own" % code
        elif not patched.stdout.strip():
            return name, False, "%s: the patched script printed nothing" % code
        rounds = len([r for r in (report.get("fix") or {}).get("rounds", []) if r["fixed"]])
        return name, True, "%s: fixed (%d round(s))" % (code, rounds)


def _fixture(name, parser):
    """An example or fixture named by its file name (``dlw102_collate.py``) or its path."""
    if Path(name).is_file():
        return Path(name).resolve()
    try:
        return find(name)
    except LookupError as error:
        parser.error("%s: %s" % (name, error))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verify", action="store_true",
                        help="let the doctor re-run and fix again in rounds")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("fixtures", nargs="*",
                        help="fixtures to measure (under fixtures/, or a path to one)")
    options = parser.parse_args()
    paths = [_fixture(f, parser) for f in options.fixtures] if options.fixtures \
        else fixtures()
    with ThreadPoolExecutor(options.jobs) as pool:
        results = list(pool.map(lambda p: measure(p, options.verify), paths))
    for name, fixed, note in results:
        mark = {True: "fixed", False: "NOT FIXED", None: "-"}[fixed]
        print("%-40s %-10s %s" % (name, mark, note))
    counted = [r for r in results if r[1] is not None]
    done = sum(1 for r in counted if r[1])
    print("fixable crashing fixtures fixed: %d of %d (%.0f %%)" % (
        done, len(counted), 100.0 * done / max(1, len(counted))))


if __name__ == "__main__":
    main()
