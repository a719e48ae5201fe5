"""The hook in .pre-commit-hooks.yaml, run by the real pre-commit in a real git repository.

pre-commit installs the hook's environment from this repository at its HEAD commit
(``pip install .`` into a new virtualenv, from the package registry), once: both
commits below use it.  (``pre-commit try-repo`` installs into a store of its own
each time it runs, so the installed hook is the cheaper of the two to test.)
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

CRASHING = '''\
from torch.utils.data import DataLoader

if __name__ == "__main__":
    for batch in DataLoader([1, 2], num_workers=2, collate_fn=lambda b: b):
        pass
'''
CLEAN = CRASHING.replace("collate_fn=lambda b: b", "batch_size=2")


def _git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                          check=True, timeout=60).stdout.strip()


def _head():
    try:
        return _git(ROOT, "rev-parse", "HEAD")
    except (OSError, subprocess.CalledProcessError):
        return None


def _pre_commit(repo, env, *args):
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900)


@pytest.mark.skipif(shutil.which("git") is None or _head() is None,
                    reason="needs git and this project as a git checkout")
def test_hook_refuses_a_commit_with_a_crashing_loader(tmp_path):
    rev = _head()
    repo = tmp_path / "user"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "dev@example.invalid")
    _git(repo, "config", "user.name", "dev")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"))
    (repo / "train.py").write_text(CRASHING)
    _git(repo, "add", "train.py")

    # the hook as a user adds it; the commit of the crashing file is refused
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n  - repo: %s\n    rev: %s\n    hooks:\n      - id: flake8-dlworker\n"
        % (ROOT, rev))
    installed = _pre_commit(repo, env, "install")
    assert installed.returncode == 0, installed.stderr
    _git(repo, "add", ".pre-commit-config.yaml")
    refused = subprocess.run(["git", "commit", "-m", "train"], cwd=repo, env=env,
                             capture_output=True, text=True, timeout=900)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "flake8-dlworker" in refused.stdout + refused.stderr
    assert "train.py:4:63: DLW102 lambda passed as collate_fn" in refused.stdout + refused.stderr
    assert subprocess.run(["git", "rev-parse", "--verify", "HEAD"], cwd=repo,
                          capture_output=True).returncode != 0  # nothing was committed

    # the fixed file passes, and the commit is made
    (repo / "train.py").write_text(CLEAN)
    _git(repo, "add", "train.py")
    passed = subprocess.run(["git", "commit", "-m", "train"], cwd=repo, env=env,
                            capture_output=True, text=True, timeout=900)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "flake8-dlworker" in passed.stdout + passed.stderr and "Passed" in (
        passed.stdout + passed.stderr)
    assert _git(repo, "log", "--format=%s") == "train"
