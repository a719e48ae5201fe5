"""The patch makers: their Fixit-style examples, and every fixable crashing fixture
patched, linted, and re-run under a real spawn start method by the doctor."""
import ast
import difflib
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tokenize
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import libcst as cst
import pytest

from doctor.patches._cst import Tree
from doctor.patches import fixed_source, make_patch, maker, new_problems, unified_diff
from flake8_dlworker import catalog
from flake8_dlworker.catalog import RULES
from fixture_markers import (CAUSES, FIXTURES, expected_findings, find, fixture_files,
                             modules_beside)
from tiers import run_python, starts_torch

#: the codes whose cause folder holds a patch maker
CODES = catalog.having("patch")

ROOT = Path(__file__).resolve().parents[1]

#: crashing fixtures with a patch; the code each one fixes
FIXABLE = sorted(
    p.name for p in fixture_files() if p.name.startswith("dlw1")
    if p.name.split("_")[0].upper() in ("DLW101", "DLW102", "DLW103", "DLW104", "DLW106", "DLW107",
                                        "DLW108", "DLW109", "DLW111")
    and p.name not in (
        # its loader is built in a module beside it, which make_patch, linting the text
        # alone, cannot see (the doctor's run patches it: bench/fix_share.py)
        "dlw101_sibling_factory.py", "dlw101_two_hops.py",
        # the same for an option's default and a handle that a module beside it gives
        "dlw106_args_from_module.py", "dlw108_helper_module.py",
        # a handle kept by a dataset class of a module beside it, or by an object of
        # such a class the dataset keeps: patched there, from the run's evidence (the
        # assignment the probe names)
        "dlw108_dataset_module.py", "dlw108_sys_path.py", "dlw108_storage_module.py",
        # the same for a generator kept by a dataset class of a module beside it: the
        # class is changed there (noisy_draws.py), the script has nothing to patch
        "dlw111_dataset_module.py",
        # only the run sees that its worker_init_fn (an object) only seeds: patched from
        # the run's evidence (tests/test_patches_rounds.py)
        "dlw109_seeding_callable.py",
        # only the run sees its lambda: it is patched from the run's
        # evidence (tests/test_patches_rounds.py), not from a static finding
        "dlw102_transform_table.py",
        # the class is returned by the factory, not called in it: hoisting it with the
        # values it reads from the factory is not done for a returned class yet
        "dlw103_class_factory.py",
        # the same, for a class that a factory in a module beside it returns
        "dlw103_factory_beside.py"))


def _code(name):
    return name.split("_")[0].upper()


def _examples():
    for code in CODES:
        for path in RULES[code].example_paths("patches"):
            path = Path(path)
            yield pytest.param(code, path, id="%s-%s" % (code, path.stem))


@pytest.mark.parametrize("code, path", list(_examples()))
def test_maker_case_gets_the_expected_fix(code, path):
    """``causes/<CODE>/patches/NN.py``: the maker's fix is ``NN.fix.diff`` to the letter."""
    facts = getattr(maker(code), "FACTS", None)
    name = path.relative_to(ROOT).as_posix()
    before = path.read_text(encoding="utf-8")
    after = fixed_source(code, name, before, None, facts)
    assert after is not None, name
    assert unified_diff(name, before, after) == \
        path.with_name(path.stem + ".fix.diff").read_text(encoding="utf-8")
    # idempotent: the fixed code gets no second patch
    assert fixed_source(code, name, after, None, facts) is None


_GUARDED = ("from torch.utils.data import DataLoader\n\n\ndef collate(batch):\n"
            "    return batch\n\n\nif __name__ == \"__main__\":\n"
            "    for batch in DataLoader(range(8), num_workers=2, collate_fn=collate):\n"
            "        print(batch)\n")


def test_a_step_that_adds_a_problem_the_checker_sees_is_not_made():
    """The proof a patch has without a run: it compiles and the checker finds nothing
    in the patched file that it did not find before; a step that breaks that is not
    made (the report hands over no patch rather than a broken one)."""
    from doctor.patches.combine import _step

    broken = _GUARDED.replace("collate_fn=collate", "collate_fn=lambda b: b")
    assert new_problems(_GUARDED, broken, "train.py") == ["DLW102"]
    assert new_problems(broken, _GUARDED, "train.py") == []

    def lambda_step(text, *args):
        return broken

    def rename_step(text, *args):
        return text.replace("collate", "gather")

    assert _step(lambda_step, _GUARDED, "train.py", "spawn") is None
    assert _step(rename_step, _GUARDED, "train.py", "spawn") == \
        _GUARDED.replace("collate", "gather")


def test_every_maker_has_cases():
    for code in CODES:
        assert RULES[code].example_paths("patches"), code


def _comments(source):
    return sorted(tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                  if tok.type == tokenize.COMMENT)


@pytest.mark.parametrize("name", FIXABLE)
def test_fixture_patch_keeps_everything_else(name):
    """Comments all survive; each removed line is the flagged line or reappears, moved."""
    path = find(name)
    source = path.read_text()
    code = _code(name)
    new = fixed_source(code, str(path), source)
    assert new is not None
    assert not Counter(_comments(source)) - Counter(_comments(new))  # every comment kept
    flagged = set()
    tree = Tree(source)
    for line, _col, c in expected_findings(path):
        flagged.add(line)
        for stmt in tree.on_line(line, cst.SimpleStatementLine) if c == code else ():
            where = tree.pos[stmt]
            flagged.update(range(where.start.line, where.end.line + 1))
    new_lines = [line.strip() for line in new.splitlines()]
    old = source.splitlines()
    matcher = difflib.SequenceMatcher(None, old, new.splitlines(), autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        for i in range(i1, i2) if op in ("replace", "delete") else ():
            # the flagged statement, a line moved elsewhere, one edited in place, or one
            # moved and edited (a captured ``offset`` read as ``self.offset``)
            edited = any(difflib.SequenceMatcher(None, old[i], line).ratio() > 0.75
                         for line in new.splitlines()[j1:j2]) or any(
                difflib.SequenceMatcher(None, old[i].strip(), line).ratio() > 0.75
                for line in new_lines) or any(  # or wrapped: ``return partial(encode, ...)``
                all(re.search(r"\b%s\b" % word, line) for word in re.findall(r"\w+", old[i]))
                for line in new_lines)
            assert i + 1 in flagged or old[i].strip() in new_lines or edited, (name, old[i])


def test_package_main_definition_moves_to_a_new_module(tmp_path):
    """``python -m dlw104_pkg``: workers never import __main__.py, so its dataset moves
    to ``dlw104_pkg/data.py``; the diff (one changed file, one created) applies with
    ``git apply`` and the package then runs under spawn, printing what it printed."""
    shutil.copytree(FIXTURES / "dlw104_pkg", tmp_path / "dlw104_pkg")
    name = "dlw104_pkg/__main__.py"
    diff = make_patch("DLW104", name, (tmp_path / name).read_text(), None)
    assert "--- /dev/null\n+++ b/dlw104_pkg/data.py\n" in diff, diff
    assert "+from dlw104_pkg.data import Numbers\n" in diff, diff
    assert not (tmp_path / "dlw104_pkg" / "data.py").exists()  # a patch writes nothing
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    done = subprocess.run(["git", "apply"], input=diff, text=True, cwd=tmp_path,
                          capture_output=True)
    assert done.returncode == 0, done.stderr
    run = run_python([str(ROOT / "tests" / "spawn_run.py"), "-m", "dlw104_pkg"],
                     cwd=tmp_path, capture_output=True, text=True, timeout=600, env=_env())
    assert (run.returncode, run.stdout) == (0, "6.0\n22.0\n38.0\n54.0\n"), run.stderr[-3000:]
    lint = subprocess.run([sys.executable, "-m", "flake8", "--select", "DLW", "dlw104_pkg"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert lint.stdout == "", lint.stdout


def test_no_patch_where_none_is_safe(tmp_path):
    """A definition in a package's __main__.py that reads another name defined there
    cannot move out alone: no patch."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    source = (FIXTURES / "dlw104_pkg" / "__main__.py").read_text().replace(
        "        return 16", "        return SIZE").replace(
        "\n\nclass Numbers", "\nSIZE = 16\n\n\nclass Numbers")
    (package / "__main__.py").write_text(source)
    assert "return SIZE" in source and "SIZE = 16" in source
    assert static_codes(str(package / "__main__.py")) == ["DLW104"]
    assert make_patch("DLW104", str(package / "__main__.py"), source, None) is None


def static_codes(path):
    from doctor.static import static_findings
    return [f["code"] for f in static_findings(path)]


@pytest.fixture(scope="module")
def patched(tmp_path_factory):
    """Every fixable fixture, copied and patched with the real ``git apply``."""
    root = tmp_path_factory.mktemp("patched")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    for name in FIXABLE:
        shutil.copy(find(name), root / name)
        for beside in modules_beside(find(name)):
            shutil.copy(beside, root / beside.name)
        diff = make_patch(_code(name), name, (root / name).read_text(), None)
        assert diff and diff.startswith("--- a/%s\n+++ b/%s\n" % (name, name)), name
        done = subprocess.run(["git", "apply", "-"], input=diff, text=True, cwd=root,
                              capture_output=True)
        assert done.returncode == 0, done.stdout + done.stderr
    return root


def test_patched_fixtures_are_clean_for_their_code(patched):
    out = subprocess.run([sys.executable, "-m", "flake8", "--select", "DLW", *FIXABLE],
                         cwd=patched, capture_output=True, text=True).stdout
    for name in FIXABLE:
        assert not [line for line in out.splitlines()
                    if line.startswith(name + ":") and _code(name) in line], out


@pytest.mark.parametrize("name", FIXABLE)
def test_patched_fixture_prints_its_own_output_under_spawn(patched, name, tmp_path):
    """The patched copy runs to the end under a real spawn start method and prints what
    the fixture itself prints under fork, where nothing is pickled and it does not
    crash (a patch that skips the loop fails here); where the patch changes what runs
    where, it prints OWN_OUTPUT. Nothing is left for the makers to patch."""
    want = OWN_OUTPUT.get(name)
    if want is None:
        recorded = json.loads(FORK_OUTPUTS.read_text()).get(name, {})
        assert recorded.get("sha256") == _fingerprint(name), (
            "%s has no fork output recorded for its current text: run "
            "`python tests/test_patches.py`" % name)
        want = recorded["stdout"]
    run = _spawn_run([name], patched)
    assert run.returncode == 0, run.stderr[-3000:]
    assert want(run.stdout) if callable(want) else run.stdout == want, run.stdout
    source = (patched / name).read_text()
    assert [c for c in CODES if maker(c).STATIC and make_patch(c, name, source, None)] == []


#: what each fixture prints under fork, where nothing is pickled and it does not crash,
#: with the fingerprint of the text it was recorded from (``python tests/test_patches.py``)
FORK_OUTPUTS = ROOT / "tests" / "fork_outputs.json"


def _fingerprint(name):
    digest = hashlib.sha256()
    for path in [find(name), *modules_beside(find(name))]:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _fork_output(name):
    """(name, what the fixture prints run under fork), in a folder of its own."""
    with tempfile.TemporaryDirectory() as folder:
        shutil.copy(find(name), Path(folder) / name)
        for beside in modules_beside(find(name)):
            shutil.copy(beside, Path(folder) / beside.name)
        run = _spawn_run(["--fork", name], folder)
    if run.returncode != 0 or not run.stdout:
        raise SystemExit("%s fails under fork:\n%s" % (name, run.stderr[-3000:]))
    return name, {"sha256": _fingerprint(name), "stdout": run.stdout}


@starts_torch
def _spawn_run(args, cwd):
    return subprocess.run([sys.executable, str(ROOT / "tests" / "spawn_run.py"), *args],
                          cwd=cwd, capture_output=True, text=True, timeout=600, env=_env())


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_dlw201_facts_from_the_run_and_no_patch_when_memory_does_not_explain():
    """The measured numbers reach the maker; a kill that memory per worker does not
    explain (the fixture's worker kills itself at 0.3 GiB) gets no patch."""
    from doctor.evidence import Evidence, WorkerExit
    from doctor.patches.workflow import facts_for

    ev = Evidence(loaders=[{"event": "loader", "num_workers": 2}],
                  workers=[WorkerExit(pid=1, signal=9, peak_rss_gb=0.3),
                           WorkerExit(pid=2, peak_rss_gb=0.2)])
    facts = facts_for("DLW201", ev)
    assert facts["peak_rss_gb"] == 0.3 and facts["num_workers"] == 2
    assert facts["available_gb"] > 0
    source = (find("dlw201_sigkill.py")).read_text()
    tight = dict(facts, available_gb=0.5)  # room for 1 worker of 0.3 GiB, not 2
    diff = make_patch("DLW201", "dlw201_sigkill.py", source, 14, tight)
    assert "+    # DLW201: num_workers 2 -> 1 = floor(0.50 GiB available / 0.30 GiB peak" in diff
    assert "+    for batch in DataLoader(Growing(), batch_size=4, num_workers=1):" in diff
    roomy = dict(facts, available_gb=0.7)  # room for both: memory does not explain it
    assert make_patch("DLW201", "dlw201_sigkill.py", source, 14, roomy) is None


#: what a patched fixture itself prints under spawn, where the patch changes what runs
#: where (the batches move to the GPU only in the loop; each worker yields its share)
#: or the reference under fork is not plain (a framework's own output, fork warnings)
OWN_OUTPUT = {
    "dlw101_accelerate_prepare.py": "4\n4\n",
    "dlw101_hf_trainer_train.py": "steps 2\n",
    "dlw101_lightning_fit.py": "steps 2\n",
    "dlw102_hf_trainer_collator.py": "steps 2\n",
    "dlw107_getitem_cuda.py": "18.0\n66.0\n",
    "dlw107_collate_to.py": "14.0\n126.0\n",
    "dlw109_unsharded.py": "samples: [0, 1, 2, 3]\n",
    "dlw109_seeding_init_fn.py": "samples: [0, 1, 2, 3]\n",
    # these crash under fork too (DataLoader refuses the option with 0 workers; a pool
    # pickles its function whatever the start method): what the fixed script prints
    "dlw103_pool_map.py": "[0, 1, 4, 9]\n9\n",
    "dlw106_argparse_default.py": "6.0\n22.0\n38.0\n54.0\n",
    "dlw106_config_dict.py": "6.0\n22.0\n38.0\n54.0\n",
    "dlw106_persistent.py": "6.0\n22.0\n38.0\n54.0\n",
    "dlw106_prefetch.py": "6.0\n22.0\n38.0\n54.0\n",
    "dlw106_hf_persistent.py": "steps 2\n",
    "dlw106_set_defaults.py": "6.0\n22.0\n38.0\n54.0\n",
    "dlw106_prefetch_argument.py": "6.0\n22.0\n38.0\n54.0\n",
    "dlw106_config_dataclass.py": "28.0\n92.0\n",
    "dlw106_datamodule_default.py": "6.0\n22.0\n38.0\n54.0\n",
    # mp.spawn spawns its ranks whatever the start method (nothing to record under
    # fork): what the fixed script prints, each rank's lines in its own order
    "dlw102_spawn_args.py": lambda out: sorted(out.splitlines()) == [
        "rank %d of 2 tensor([%s])" % (rank, batch) for rank in (0, 1)
        for batch in ("0., 1., 2., 3.", "4., 5., 6., 7.")],
    # Lightning's ddp_spawn too: the ranks' state comes back to the main process
    "dlw102_lightning_ddp_spawn.py": "finished True\n",
    "dlw103_spawn_worker.py": lambda out: sorted(out.splitlines()) == [
        "rank %d of 2 %s" % (rank, batch) for rank in (0, 1)
        for batch in ("[0.0, 1.0, 2.0, 3.0]", "[4.0, 5.0, 6.0, 7.0]")],
    # random draws: each worker's own stream now, no longer one stream in every worker
    "dlw111_default_rng.py": lambda out: (
        out.startswith("draws: ") and len({tuple(s) for s in
                                           ast.literal_eval(out[7:]).values()}) == 2),
}


if __name__ == "__main__":  # record what the fixtures print under fork
    names = [n for n in FIXABLE if n not in OWN_OUTPUT]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        outputs = dict(pool.map(_fork_output, names))
    FORK_OUTPUTS.write_text(json.dumps(outputs, indent=1, sort_keys=True) + "\n")
    print("recorded %d fork outputs in %s" % (len(outputs), FORK_OUTPUTS.relative_to(ROOT)))


def test_the_combined_fix_adds_no_blank_line_inside_the_guard(tmp_path):
    """A lambda lifted out of unguarded code, then that code moved under the guard: the
    blank lines that set the lifted def apart stay with it, none inside the block."""
    from doctor.patches.combine import Request, combine

    script = tmp_path / "multi_lambda_unguarded.py"
    script.write_text((ROOT / "fixtures" / "multi_lambda_unguarded.py").read_text())
    path = str(script)
    fixed = combine([Request("DLW102", path), Request("DLW101", path)])[path]
    before, after = fixed.before.splitlines(), fixed.after.splitlines()
    guard = after.index('if __name__ == "__main__":')
    block = after[guard + 1:]
    assert block and all(line.startswith("    ") and line.strip() for line in block), after
    assert "def _collate(batch):" in after[:guard] and after[guard - 2:guard] == ["", ""]
    assert sum(not line.strip() for line in after) == sum(
        not line.strip() for line in before) + 3  # one more above the def, two above the guard


def test_dlw112_no_patch_where_the_loop_has_no_body_of_its_own():
    """A one-line epoch loop has no first statement to put set_epoch before: the fix
    stays in words."""
    source = (CAUSES / "DLW112" / "invalid" / "01.py").read_text(encoding="utf-8").replace(
        "    for epoch in range(3):\n        for batch in loader:  # the same order every "
        "epoch\n            print(epoch, batch)\n",
        "    for epoch in range(3): print(epoch, list(loader))  # noqa: E701\n")
    assert "range(3): print" in source
    assert fixed_source("DLW112", "train.py", source, None, None) is None
