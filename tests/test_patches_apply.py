"""--verify, --apply and check --diff: real runs, real files, a real interrupted write."""
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from doctor import pipeline, sandbox
from doctor.diagnose import Diagnosis
from doctor.evidence import Evidence
from doctor.patches import workflow, write
from fixture_markers import find
from tiers import starts_torch

ROOT = Path(__file__).resolve().parents[1]


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


@starts_torch
def _doctor(args, cwd, **env):
    return subprocess.run([sys.executable, "-m", "doctor", *args], cwd=cwd, text=True,
                          capture_output=True, env=_env(**env), timeout=300)


def _proposal(folder, name="train.py", fixture="dlw102_collate.py"):
    path = folder / name
    shutil.copy(find(fixture), path)
    before = path.read_text()
    diag = Diagnosis("DLW102", "certain", path=str(path), line=8)
    (proposal,) = workflow.propose(None, [diag], cwd=str(folder))
    return proposal, before


def test_interrupted_apply_leaves_the_original_intact(tmp_path):
    """SIGKILL between writing the new text and replacing the file: the file is as it was."""
    script = textwrap.dedent('''
        import os, sys
        from doctor.diagnose import Diagnosis
        from doctor.patches import workflow, write
        diag = Diagnosis("DLW102", "certain", path="train.py", line=8)
        (proposal,) = workflow.propose(None, [diag])
        write.apply(proposal, force=True)
        print("replaced", flush=True)
    ''')
    shutil.copy(find("dlw102_collate.py"), tmp_path / "train.py")
    before = (tmp_path / "train.py").read_bytes()
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(**{write.PAUSE_ENV: "1"}))
    try:
        line = proc.stderr.readline()  # printed once the new text is on disk
        assert "written" in line and "replacing" in line, line + proc.stderr.read()
        temp = line.split("written ", 1)[1].split(", replacing")[0]
        assert Path(temp).read_text() != before.decode()  # the new text really is there
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    assert (tmp_path / "train.py").read_bytes() == before
    assert (tmp_path / "train.py.orig").read_bytes() == before


def test_apply_without_interruption_writes_and_keeps_a_backup(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    proposal, before = _proposal(tmp_path)
    backup = write.apply(proposal, force=True)
    assert Path(backup).read_text() == before
    assert (tmp_path / "train.py").read_text() == proposal.after
    assert os.stat(backup).st_mode == os.stat(tmp_path / "train.py").st_mode
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    # a second backup never overwrites the first
    assert write.backup_path(str(tmp_path / "train.py")).endswith(".orig.2")


def test_apply_refuses_unverified_outside_and_changed(tmp_path, monkeypatch):
    inside = tmp_path / "work"
    inside.mkdir()
    monkeypatch.chdir(inside)
    proposal, before = _proposal(inside)
    with pytest.raises(write.ApplyError, match="not verified"):
        write.apply(proposal)
    (inside / "train.py").write_text(before + "# edited\n")
    with pytest.raises(write.ApplyError, match="changed since"):
        write.apply(proposal, force=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(find("dlw102_collate.py"), outside / "train.py")
    proposal.path = str(outside / "train.py")
    with pytest.raises(write.ApplyError, match="outside the working directory"):
        write.apply(proposal, force=True)
    assert (outside / "train.py").read_text() == before
    assert not list(outside.glob("*.orig*"))


def test_apply_through_the_cli_writes_only_after_a_verifying_rerun(tmp_path):
    """--apply re-runs a patched copy first (so verified is true), then writes, with a
    backup; --verify alone writing nothing is tested on pipeline.fix_script above."""
    shutil.copy(find("dlw102_collate.py"), tmp_path / "train.py")
    before = (tmp_path / "train.py").read_text()
    run = _doctor(["--json", "--max-batches", "1", "--timeout", "120", "--apply", "train.py"],
                  tmp_path)
    (diag,) = json.loads(run.stdout)["diagnoses"]
    assert (diag["code"], diag["verified"]) == ("DLW102", True), run.stderr[-3000:]
    assert diag["patch"].startswith("--- a/train.py\n+++ b/train.py\n")
    assert any("re-run of the patched copy under spawn" in e and "DLW102 is gone" in e
               for e in diag["evidence"])
    assert "doctor: wrote train.py (backup: train.py.orig)" in run.stderr
    assert (tmp_path / "train.py.orig").read_text() == before
    after = (tmp_path / "train.py").read_text()
    assert "_collate" in after and after != before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py", "train.py.orig"]


def test_force_needs_apply(tmp_path):
    shutil.copy(find("dlw102_collate.py"), tmp_path / "train.py")
    run = _doctor(["--force", "train.py"], tmp_path)
    assert run.returncode == 2
    assert run.stderr.strip() == "doctor: error: --force only goes with --apply"


def test_check_diff_prints_patches_that_apply(tmp_path):
    names = ["dlw101_loop.py", "dlw103_nested_collate.py", "dlw106_persistent.py",
             "dlw106_prefetch.py", "clean_good_script.py"]
    for name in names:
        shutil.copy(find(name), tmp_path / name)
    run = _doctor(["check", "--diff", *names], tmp_path)
    assert run.returncode == 1, run.stderr
    assert run.stdout.count("--- a/") == 4  # two files with DLW106: both patched
    assert "clean_good_script.py" not in run.stdout
    done = subprocess.run(["patch", "-p1", "--forward", "--no-backup-if-mismatch"],
                          input=run.stdout, text=True, cwd=tmp_path, capture_output=True)
    assert done.returncode == 0, done.stdout + done.stderr
    again = _doctor(["check", "--diff", *names], tmp_path)
    assert (again.returncode, again.stdout) == (0, "")


def test_check_diff_without_findings_prints_nothing(tmp_path):
    shutil.copy(find("clean_good_script.py"), tmp_path / "clean.py")
    run = _doctor(["check", "--diff", "clean.py"], tmp_path)
    assert (run.returncode, run.stdout) == (0, "")


def test_verify_copy_never_writes_through_links(tmp_path, monkeypatch):
    """The re-run's copy: Python files really copied (a linked one too), small data
    copied, packages copied; a real re-run of the copy leaves the user's files as they
    were."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "helper.py").write_text("X = 1\n")
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    (work / "data" / "x.bin").write_bytes(b"\0" * 10)
    (work / "pkg").mkdir()
    (work / "pkg" / "__init__.py").write_text("")
    (work / "helper.py").symlink_to(elsewhere / "helper.py")
    shutil.copy(find("dlw102_collate.py"), work / "train.py")
    before = (work / "train.py").read_text()
    copy = tmp_path / "copy"
    sandbox.Copy(str(work), str(copy))
    assert (copy / "data" / "x.bin").is_file() and (copy / "pkg" / "__init__.py").is_file()
    assert not (copy / "data").is_symlink() and not (copy / "data" / "x.bin").is_symlink()
    assert not (copy / "pkg").is_symlink() and not (copy / "helper.py").is_symlink()
    assert not (copy / "train.py").is_symlink()
    monkeypatch.chdir(work)
    diag = Diagnosis("DLW102", "certain", path="train.py", line=8)
    ran = Evidence(target="train.py", start_method="spawn", outcome="crashed")
    pipeline.fix_script(ran, [diag], ["train.py"],
                        pipeline.Options(verify=True, max_batches=1, timeout=300))
    assert diag.verified is True, diag.evidence
    assert (work / "train.py").read_text() == before
    assert (elsewhere / "helper.py").read_text() == "X = 1\n"
    assert sorted(p.name for p in work.iterdir()) == ["data", "helper.py", "pkg", "train.py"]


WRITES_BESIDE_ITSELF = """\
import json
import os

from torch.utils.data import DataLoader

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    with open(os.path.join(HERE, "config.json"), "w") as handle:
        json.dump({"written_by": HERE}, handle)
    with open(os.path.join(HERE, "history.log"), "a") as handle:
        handle.write("one more run\\n")
    with open(os.path.join(HERE, "data", "seen.txt"), "a") as handle:
        handle.write("seen\\n")
    loader = DataLoader(list(range(8)), batch_size=2, num_workers=2,
                        collate_fn=lambda batch: batch)
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main()
"""


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in folder.rglob("*") if p.is_file()}


def test_verify_and_apply_change_nothing_outside_the_copy_but_what_apply_writes(tmp_path):
    """A script that writes config.json, appends to history.log and to a file of its data
    folder beside itself: the doctor's run of the script itself does so once; the
    re-runs of --verify and --apply, in a copy, change no file of the user's folder
    (only the one --apply reports writing, and its backup)."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "seen.txt").write_text("seen before\n")
    (tmp_path / "history.log").write_text("my first run\n")
    (tmp_path / "train.py").write_text(WRITES_BESIDE_ITSELF)
    own_run = {"config.json": ('{"written_by": %s}' % json.dumps(str(tmp_path))).encode(),
               "history.log": b"my first run\none more run\n",
               "data/seen.txt": b"seen before\nseen\n",
               "train.py": WRITES_BESIDE_ITSELF.encode()}
    run = _doctor(["--json", "--verify", "train.py"], tmp_path)
    assert json.loads(run.stdout)["fix"]["verified"] is True, run.stderr[-3000:]
    assert _files(tmp_path) == own_run
    (tmp_path / "history.log").write_text("my first run\n")
    (tmp_path / "data" / "seen.txt").write_text("seen before\n")
    run = _doctor(["--json", "--apply", "train.py"], tmp_path)
    assert "doctor: wrote train.py (backup: train.py.orig)" in run.stderr, run.stderr[-3000:]
    after = _files(tmp_path)
    assert after.pop("train.py.orig") == own_run["train.py"]
    assert after.pop("train.py") != own_run.pop("train.py")
    assert after == own_run


def test_a_large_file_is_cloned_or_linked_and_a_write_through_the_link_is_seen(
        tmp_path, monkeypatch):
    """Past the copy budget a file is cloned (copy-on-write) or linked; a re-run that
    wrote through a link is seen, so that it is never taken as proof."""
    monkeypatch.setattr(sandbox, "COPY_FILE_BYTES", 4)
    work, copy = tmp_path / "work", tmp_path / "copy"
    work.mkdir()
    (work / "big.bin").write_bytes(b"0123456789")
    (work / "small.txt").write_text("ok")
    copied = sandbox.Copy(str(work), str(copy))
    assert (copy / "small.txt").is_file() and not (copy / "small.txt").is_symlink()
    state = copied.watch()
    if not (copy / "big.bin").is_symlink():  # a clone: a write stays in the copy
        (copy / "big.bin").write_bytes(b"changed")
        assert (work / "big.bin").read_bytes() == b"0123456789"
        assert sandbox.changed(state) == []
        return
    assert copied.linked == [str(work / "big.bin")]
    with open(copy / "big.bin", "ab") as handle:
        handle.write(b"more")
    assert sandbox.changed(state) == [str(work / "big.bin")]


def test_verify_of_a_runtime_cause_goes_past_the_crash(tmp_path):
    """DLW204 needs ~80 kept batches: the re-run is not stopped before that point."""
    shutil.copy(find("dlw204_nofile.py"), tmp_path / "train.py")
    run = _doctor(["--json", "--timeout", "120", "--verify", "train.py"], tmp_path)
    report = json.loads(run.stdout)
    (diag,) = [d for d in report["diagnoses"] if d["code"] == "DLW204"]
    assert diag["verified"] is True, diag["evidence"]
    assert 'set_sharing_strategy("file_system")' in diag["patch"]
    rerun = [e for e in diag["evidence"] if e.startswith("re-run of the patched copy")][0]
    batches = int(rerun.split("--max-batches ")[1].split(",")[0])
    assert batches > 60, rerun  # past the batch the first run died at


# -- --apply never destroys work: links, owners, modes, read-only files, edits meanwhile

#: apply the DLW102 patch to train.py; a refusal is the exit message (status 1)
APPLY_OR_SAY_WHY = textwrap.dedent('''
    import sys
    from doctor.diagnose import Diagnosis
    from doctor.patches import workflow, write
    diag = Diagnosis("DLW102", "certain", path="train.py", line=8)
    (proposal,) = workflow.propose(None, [diag])
    try:
        write.apply(proposal, force=True)
    except write.ApplyError as exc:
        sys.exit(str(exc))
''')


def test_apply_through_a_symlink_patches_its_target_and_keeps_the_link(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    proposal, before = _proposal(tmp_path / "src")
    os.symlink("src/train.py", tmp_path / "train.py")
    proposal.path = str(tmp_path / "train.py")
    backup = write.apply(proposal, force=True)
    assert os.path.islink(tmp_path / "train.py")
    assert (tmp_path / "src" / "train.py").read_text() == proposal.after
    assert Path(backup) == tmp_path / "src" / "train.py.orig"
    assert Path(backup).read_text() == before


def test_apply_refuses_a_symlink_that_leaves_the_tree(tmp_path, monkeypatch):
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(work)
    proposal, before = _proposal(elsewhere)
    os.symlink(elsewhere / "train.py", work / "train.py")
    proposal.path = str(work / "train.py")
    with pytest.raises(write.ApplyError, match="^not written: .*outside the working"):
        write.apply(proposal, force=True)
    assert (elsewhere / "train.py").read_text() == before
    assert os.path.islink(work / "train.py") and not list(elsewhere.glob("*.orig*"))


def test_apply_refuses_a_read_only_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    proposal, before = _proposal(tmp_path)
    os.chmod(tmp_path / "train.py", 0o444)
    with pytest.raises(write.ApplyError, match="^not written: .*read-only"):
        write.apply(proposal, force=True)
    assert (tmp_path / "train.py").read_text() == before
    assert not list(tmp_path.glob("*.orig*"))


def test_apply_keeps_mode_and_owner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    proposal, _before = _proposal(tmp_path)
    os.chmod(tmp_path / "train.py", 0o640)
    other = 65534 if os.geteuid() == 0 else None  # nobody: a file root does not own
    if other is not None:
        os.chown(tmp_path / "train.py", other, other)
    backup = write.apply(proposal, force=True)
    for path in (tmp_path / "train.py", Path(backup)):
        info = os.stat(path)
        assert info.st_mode & 0o7777 == 0o640
        if other is not None:
            assert (info.st_uid, info.st_gid) == (other, other)


def test_apply_refuses_a_file_whose_owner_it_cannot_keep(tmp_path):
    """A file of another user (uid 65534) that the doctor may write but not give back
    to its owner (root without CAP_CHOWN, through setpriv): a rename would hand the file
    to the doctor's user, so nothing is written."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to drop CAP_CHOWN")
    proposal, before = _proposal(tmp_path)
    os.chmod(tmp_path / "train.py", 0o666)
    os.chown(tmp_path / "train.py", 65534, 65534)
    script = APPLY_OR_SAY_WHY
    caps = "-chown,-fowner"
    proc = subprocess.run([setpriv, "--inh-caps=" + caps, "--bounding-set=" + caps,
                           sys.executable, "-c", script], cwd=tmp_path,
                          text=True, capture_output=True, env=_env(), timeout=300)
    assert proc.returncode == 1 and "not written:" in proc.stderr, proc.stderr
    assert "owner" in proc.stderr
    assert (tmp_path / "train.py").read_text() == before
    assert os.stat(tmp_path / "train.py").st_uid == 65534


def test_an_edit_made_while_the_patch_is_written_is_kept(tmp_path):
    """The user saves the file between the doctor's check and its replace: the edit
    stays, in the file, and the doctor says it did not write."""
    script = APPLY_OR_SAY_WHY
    shutil.copy(find("dlw102_collate.py"), tmp_path / "train.py")
    edited = (tmp_path / "train.py").read_text() + "# the user's edit\n"
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(**{write.PAUSE_ENV: "1"}))
    try:
        line = proc.stderr.readline()  # the new text is on disk, the replace is next
        assert "replacing" in line, line + proc.stderr.read()
        (tmp_path / "train.py").write_text(edited)
        _out, err = proc.communicate("go\n", timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1 and "not written:" in err and "changed" in err, err
    assert (tmp_path / "train.py").read_text() == edited
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_check_fix_interrupted_while_writing_leaves_only_the_file(tmp_path, number):
    """A signal between writing the new text and replacing the file: the file is as it
    was, and neither the temporary file nor a backup of the unchanged file is left."""
    shutil.copy(find("dlw102_collate.py"), tmp_path / "t.py")
    before = (tmp_path / "t.py").read_bytes()
    proc = subprocess.Popen([sys.executable, "-m", "doctor", "check", "--fix", "t.py"],
                            cwd=tmp_path, text=True, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_env(**{write.PAUSE_ENV: "1"}))
    try:
        line = proc.stderr.readline()  # the new text is on disk, the replace is next
        assert "replacing" in line, line + proc.stderr.read()
        proc.send_signal(number)
        _out, err = proc.communicate("go\n", timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + number, err
    assert "not written" in err and signal.Signals(number).name in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.py"]
    assert (tmp_path / "t.py").read_bytes() == before
