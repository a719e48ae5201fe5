"""``doctor check`` reports what ``flake8 --select DLW`` reports, with the same
configuration, in every format; ``--diff`` and ``--fix`` touch only what it reports.

The project below has several files, several findings per file and per code, a
notebook, ``# noqa`` comments, a ``per-file-ignores`` entry and ``dlw-start-method =
fork`` in its setup.cfg. Real flake8 checks the Python files and real nbqa (flake8 on
the notebook's cells) the notebook; each of check's formats must give the same
(path, place, code) set.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from importlib.util import find_spec

import pytest

from doctor_run import doctor_command

SETUP_CFG = """\
[flake8]
dlw-start-method = fork
per-file-ignores =
    legacy/*.py: DLW106
"""
TRAIN = '''\
from torch.utils.data import DataLoader


def main():
    a = DataLoader([1, 2], persistent_workers=True)
    b = DataLoader([1, 2], num_workers=0, prefetch_factor=4)
    c = DataLoader([1, 2], persistent_workers=True)  # noqa: DLW106
    d = DataLoader([1, 2], prefetch_factor=2)  # noqa
    e = DataLoader([1, 2], num_workers=2, collate_fn=lambda b: b)  # spawn only: silent
    return a, b, c, d, e
'''
DATA = '''\
import h5py
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Noisy(Dataset):
    def __init__(self, path):
        self.rng = np.random.default_rng(0)
        self.h5 = h5py.File(path, "r")
        self.h5_quiet = h5py.File(path, "r")  # noqa: DLW108

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.full((3,), float(i)).cuda() + self.rng.normal()


class Tokens(Dataset):
    def __init__(self, path):
        self.h5 = h5py.File(path, "r")

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return i


def loaders(path):
    return DataLoader(Noisy(path), num_workers=2), DataLoader(Tokens(path), num_workers=4)
'''
LEGACY = '''\
import numpy as np
from torch.utils.data import DataLoader, Dataset


class Old(Dataset):
    def __init__(self):
        self.rng = np.random.default_rng(0)

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self.rng.normal()


def loader():
    return DataLoader(Old(), num_workers=2), DataLoader(Old(), persistent_workers=True)
'''
CELLS = [
    ("markdown", "# loaders"),
    "from torch.utils.data import DataLoader, Dataset\n",
    "class Cells(Dataset):  # DLW104 under spawn only\n"
    "    def __len__(self):\n        return 1\n\n"
    "    def __getitem__(self, i):\n        return i\n",
    "a = DataLoader(Cells(), persistent_workers=True)\n"
    "b = DataLoader(Cells(), prefetch_factor=2)  # noqa: DLW106\n"
    "c = DataLoader(Cells(), num_workers=0, prefetch_factor=3)\n",
]


def notebook_text(cells):
    made = []
    for cell in cells:
        kind, text = cell if isinstance(cell, tuple) else ("code", cell)
        made.append({"cell_type": kind, "metadata": {}, "source": text.splitlines(True),
                     **({"outputs": [], "execution_count": None} if kind == "code" else {})})
    return json.dumps({"cells": made, "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                      indent=1)


def write_tree(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def configured(tmp_path_factory):
    root = tmp_path_factory.mktemp("configured")
    write_tree(root, {"setup.cfg": SETUP_CFG, "train.py": TRAIN, "pkg/data.py": DATA,
                      "legacy/old.py": LEGACY, "nb.ipynb": notebook_text(CELLS)})
    return root


def flake8_set(root, *args):
    """{(path, line, code)} from real ``flake8 --select DLW`` on the folder."""
    out = subprocess.run([sys.executable, "-m", "flake8", "--select", "DLW", *args, "."],
                         cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode in (0, 1) and out.stderr == "", out.stderr
    found = set()
    for line in out.stdout.splitlines():
        path, row, _col, message = line.split(":", 3)
        found.add((os.path.normpath(path), int(row), message.split()[0]))
    return found


def nbqa_set(root, name):
    """{(path, (cell index, line in it), code)} from real ``nbqa flake8 --select DLW``:
    nbqa numbers code cells from 1."""
    out = subprocess.run([sys.executable, "-m", "nbqa", "flake8", name, "--select", "DLW"],
                         cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode in (0, 1), out.stderr
    cells = json.loads((root / name).read_text())["cells"]
    index = [i for i, cell in enumerate(cells) if cell["cell_type"] == "code"]
    found = set()
    for line in out.stdout.splitlines():
        path, cell, row, _col, message = line.split(":", 4)
        found.add((path, (index[int(cell.replace("cell_", "")) - 1], int(row)),
                   message.split()[0]))
    return found


def check_set(root, fmt, *args):
    """{(path, line or (cell, line), code)} from ``doctor check --format FMT .``."""
    status, _report, out, err, _left = doctor_command(["check", "--format", fmt, *args, "."],
                                                      root)
    assert status == 1 and err == "", (fmt, err)
    return {_place(item) for item in PARSE[fmt](out)}, out


def _place(item):
    path, cell, line, code = item
    return path, (line if cell is None else (cell, line)), code


def _parse_text(out):
    for path, where, code in re.findall(r"^    - (.+?):(\d+|cell \d+:\d+): (DLW\d+) ", out,
                                        re.M):
        if where.startswith("cell "):
            cell, line = where[5:].split(":")
            yield path, int(cell) - 1, int(line), code
        else:
            yield path, None, int(where), code


def _parse_json(out):
    for diag in json.loads(out)["diagnoses"]:
        yield diag["path"], diag.get("cell"), diag["line"], diag["code"]


def _parse_sarif(out):
    for result in json.loads(out)["runs"][0]["results"]:
        location = result["locations"][0]["physicalLocation"]
        cell = result.get("properties", {})
        yield (location["artifactLocation"]["uri"], cell.get("cell"),
               cell.get("cellLine", location["region"]["startLine"]), result["ruleId"])


def _parse_github(out):
    for line in out.splitlines():
        fields, message = re.match(r"::error (.+?)::(.*)", line).groups()
        fields = dict(part.split("=", 1) for part in fields.split(","))
        cell = re.match(r"cell (\d+):(\d+): ", message)
        if cell:
            yield fields["file"], int(cell.group(1)) - 1, int(cell.group(2)), fields["title"]
        else:
            yield fields["file"], None, int(fields["line"]), fields["title"]


PARSE = {"text": _parse_text, "json": _parse_json, "sarif": _parse_sarif,
         "github": _parse_github}
nbqa = pytest.mark.skipif(find_spec("nbqa") is None, reason="nbqa is not installed here")


@nbqa
@pytest.mark.parametrize("fmt", sorted(PARSE))
def test_every_format_reports_exactly_flake8s_findings(configured, fmt):
    expected = flake8_set(configured) | nbqa_set(configured, "nb.ipynb")
    codes = [code for _path, _where, code in expected]
    # the project is what it says: several findings per file and per code, some silenced
    assert len({path for path, _w, _c in expected}) == 4
    assert all(codes.count(code) >= 2 for code in ("DLW106", "DLW108", "DLW111"))
    assert ("train.py", 7, "DLW106") not in expected  # noqa: DLW106
    assert ("train.py", 9, "DLW102") not in expected  # dlw-start-method = fork
    assert ("legacy/old.py", 17, "DLW106") not in expected  # per-file-ignores
    assert ("nb.ipynb", (3, 2), "DLW106") not in expected  # a notebook's noqa
    got, _out = check_set(configured, fmt)
    assert got == expected


def test_text_labels_findings_as_static(configured):
    _got, out = check_set(configured, "text")
    assert out.count("[found statically]") == len(flake8_set(configured)) + 2
    assert "also found" not in out and "possible]" not in out


def test_isolated_and_config_read_what_flake8_reads(configured, tmp_path):
    """--isolated ignores setup.cfg (spawn, no per-file-ignores); --config reads another
    file in its place; the noqa comments hold either way."""
    for args in (["--isolated"], ["--config", str(tmp_path / "other.cfg")]):
        (tmp_path / "other.cfg").write_text("[flake8]\nextend-ignore = DLW111\n")
        got, _out = check_set(configured, "github", *args)
        assert {p for p in got if not p[0].endswith(".ipynb")} == flake8_set(configured, *args)
    assert ("train.py", 9, "DLW102") in got and not any(c == "DLW111" for _p, _l, c in got)


@pytest.mark.parametrize("config", ["missing.cfg", "broken.cfg"])
def test_bad_configuration_is_one_line_and_exit_2(tmp_path, config):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "broken.cfg").write_text("[flake8\nselect = DLW\n")
    status, _report, out, err, _left = doctor_command(["check", "--config", config, "."],
                                                      tmp_path)
    assert status == 2 and out == "", err
    assert err.startswith("doctor: error: flake8's configuration: ") and \
        len(err.splitlines()) == 1, err


# -- --diff and --fix ------------------------------------------------------------------

TWO = '''\
from torch.utils.data import DataLoader


def main():
    first = DataLoader([1, 2], num_workers=2, collate_fn=lambda b: b)
    second = DataLoader([3, 4], num_workers=2, worker_init_fn=lambda i: None)
    kept = DataLoader([5, 6], num_workers=2, collate_fn=lambda b: b)  # noqa: DLW102
    for loader in (first, second, kept):
        for batch in loader:
            print(batch)
'''
KEPT = "    kept = DataLoader([5, 6], num_workers=2, collate_fn=lambda b: b)  # noqa: DLW102\n"


@pytest.fixture
def two_files(tmp_path):
    write_tree(tmp_path / "project", {"two.py": TWO, "pkg/other.py": TWO})
    return tmp_path / "project"


@pytest.mark.parametrize("tool", [["git", "apply"], ["patch", "-p1", "--batch"]],
                         ids=["git-apply", "patch"])
def test_diff_is_one_diff_per_file_that_git_apply_and_patch_take(two_files, tool):
    status, _report, diff, err, _left = doctor_command(["check", "--diff", "."], two_files)
    assert status == 1, err
    assert diff.count("--- a/") == 2 and diff.count("+++ b/two.py") == 1
    assert "noqa: DLW102" not in "".join(x for x in diff.splitlines(True)
                                         if x.startswith(("-", "+")))
    applied = subprocess.run(tool, input=diff, cwd=two_files, capture_output=True, text=True,
                             timeout=120)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    for name in ("two.py", "pkg/other.py"):
        assert KEPT in (two_files / name).read_text()
    assert flake8_set(two_files) == set()  # nothing left but the silenced line


def test_fix_keeps_noqa_lines_and_hard_links(two_files):
    os.link(two_files / "two.py", two_files.parent / "two-link.py")
    inode = os.stat(two_files / "two.py").st_ino
    status, _report, out, err, _left = doctor_command(["check", "--fix", "."], two_files)
    assert status == 0, (out, err)
    assert os.stat(two_files / "two.py").st_ino == inode
    assert (two_files.parent / "two-link.py").read_text() == (two_files / "two.py").read_text()
    assert os.stat(two_files / "two.py").st_nlink == 2
    for name in ("two.py", "pkg/other.py"):
        assert KEPT in (two_files / name).read_text()
        assert "lambda b: b)\n" not in (two_files / name).read_text()
        assert (two_files / (name + ".orig")).read_text() == TWO
    assert flake8_set(two_files) == set()


def test_fix_leaves_a_per_file_ignored_finding(two_files):
    (two_files / "setup.cfg").write_text("[flake8]\nper-file-ignores = pkg/*: DLW102\n")
    status, _report, _out, err, _left = doctor_command(["check", "--fix", "."], two_files)
    assert status == 0, err
    assert (two_files / "pkg" / "other.py").read_text() == TWO
    assert not (two_files / "pkg" / "other.py.orig").exists()
    shutil.rmtree(two_files / "pkg")
