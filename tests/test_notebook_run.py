"""``python -m doctor NOTEBOOK``: the fixture notebooks run for real in a Jupyter kernel
under spawn; the real error shows, the diagnosis names the cell and line the fixture's
marker gives, and the patch (a module beside the notebook) makes the notebook run."""
import json
import shutil
from pathlib import Path

import pytest

import needs
from doctor_run import doctor_command, run_doctor
from tiers import starts_torch

pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

pytestmark = needs.torch

NOTEBOOKS = Path(__file__).resolve().parents[1] / "fixtures" / "notebooks"
PATIENCE_S = 600
#: the real error of each crash, as the kernel or its workers print it
REAL_ERRORS = {
    "dlw104_dataset_in_cell": "Can't get attribute 'Squares' on <module '__main__'",
    "dlw102_collate_lambda": "Can't pickle <function <lambda>",
    "dlw103_nested_collate": "Can't pickle local object",
    "dlw108_h5py_handle": "h5py objects cannot be pickled",
}


def _markers(notebook):
    """{(code, cell, line)} from the ``# DLW1xx: COL`` markers in the code cells."""
    from fixture_markers import MARKER

    found = set()
    for index, cell in enumerate(json.loads(notebook.read_text())["cells"]):
        if cell["cell_type"] != "code":
            continue
        for number, line in enumerate("".join(cell["source"]).splitlines(), 1):
            for code, _col in MARKER.findall(line):
                found.add((code, index, number))
    return found


@pytest.fixture
def folder(tmp_path):
    """A copy of the fixture folder: --apply writes there."""
    copy = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, copy)
    return copy


#: the real run the fast tier keeps: a notebook's crash, diagnosed at its cell and fixed
E2E = "dlw102_collate_lambda"


@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.e2e] if n == E2E else [])
                                  for n in sorted(REAL_ERRORS)])
def test_a_crashing_notebook_is_diagnosed_at_its_cell_and_fixed(folder, name):
    notebook = folder / (name + ".ipynb")
    before = notebook.read_text()
    status, report, _out, err, left = run_doctor(["--json", "--apply", notebook.name],
                                                 folder, limit=PATIENCE_S)
    assert not left, left
    assert status == 1 and report["outcome"] == "crashed", err[-3000:]
    assert REAL_ERRORS[name] in err, err[-3000:]
    first = report["diagnoses"][0]
    assert first["confidence"] == "certain", report["diagnoses"]
    assert (first["code"], first["cell"], first["line"]) in _markers(notebook.with_suffix(
        ".ipynb.orig")), (first, _markers(notebook.with_suffix(".ipynb.orig")))
    # the fix: verified by a run of the patched copy, written with a backup
    assert first["verified"] is True, first["evidence"]
    module = folder / (name + "_defs.py")
    assert "--- /dev/null\n+++ b/%s\n" % module.name in first["patch"]
    assert module.is_file() and notebook.with_suffix(".ipynb.orig").read_text() == before
    fixed = json.loads(notebook.read_text())
    original = json.loads(before)
    assert [c.get("outputs") for c in fixed["cells"]] == [
        c.get("outputs") for c in original["cells"]]
    assert "import nbformat" not in module.read_text()
    nbformat = pytest.importorskip("nbformat")
    nbformat.validate(nbformat.reads(notebook.read_text(), as_version=4))


def test_the_applied_fix_runs_in_place_and_the_notebook_passes(folder):
    name = "dlw104_dataset_in_cell.ipynb"
    status, report, _out, err, left = run_doctor(["--json", "--apply", name], folder,
                                                 limit=PATIENCE_S)
    assert status == 1 and report["diagnoses"][0]["verified"] is True, err[-3000:]
    status, report, out, err, left = run_doctor(["--json", name], folder, limit=PATIENCE_S)
    assert not left, left
    assert (status, report["outcome"], report["diagnoses"]) == (0, "passed", []), err[-3000:]
    assert "env: DEMO_FLAG=1" in err  # what the cells print comes through


@pytest.mark.parametrize("name, args, outcome", [
    ("clean_dataset_from_module.ipynb", ["--max-batches", "1"], "stopped"),
    ("clean_h5py_from_module.ipynb", [], "passed"),
])
def test_a_clean_notebook_runs_with_nothing_to_say(folder, name, args, outcome):
    status, report, _out, err, left = run_doctor(["--json", *args, name], folder,
                                                 limit=PATIENCE_S)
    assert not left, left
    assert (status, report["outcome"], report["diagnoses"]) == (0, outcome, []), err[-3000:]
    assert not list(folder.glob("*_defs.py"))


def test_apply_writes_no_notebook_outside_the_working_directory(tmp_path, folder):
    """``--apply ../elsewhere/nb.ipynb``: the fix is shown and proved, but neither the
    notebook, nor its new module, nor a backup is written outside the working directory,
    as for a script."""
    work = tmp_path / "work"
    work.mkdir()
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    status, report, _out, err, left = run_doctor(
        ["--json", "--apply", "../notebooks/dlw102_collate_lambda.ipynb"], work,
        limit=PATIENCE_S)
    assert not left, left
    assert status == 1 and report["diagnoses"][0]["code"] == "DLW102", err[-3000:]
    assert "lies outside the working directory" in err, err[-3000:]
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
    assert not list(work.iterdir())


@pytest.mark.parametrize("text, expected", [
    ("{not json", "is not a notebook: not valid JSON"),
    (json.dumps({"nbformat": 5, "nbformat_minor": 0, "metadata": {}, "cells": []}),
     "is nbformat 5, newer than this checker reads"),
    (json.dumps({"nbformat": 4, "nbformat_minor": 5, "cells": [],
                 "metadata": {"kernelspec": {"name": "no-such-kernel", "language": "python",
                                             "display_name": "none"}}}),
     "the notebook's kernel 'no-such-kernel' does not exist here"),
])
def test_a_notebook_that_cannot_run_is_one_line_and_exit_2(tmp_path, text, expected):
    (tmp_path / "bad.ipynb").write_text(text)
    status, report, out, err, left = doctor_command(["bad.ipynb"], tmp_path, limit=PATIENCE_S)
    assert status == 2 and out == "" and not left
    assert err.count("\n") == 1 and err.startswith("doctor: error: bad.ipynb") \
        and expected in err, err


def test_a_notebook_takes_no_arguments(tmp_path):
    shutil.copy(NOTEBOOKS / "clean_dataset_from_module.ipynb", tmp_path / "nb.ipynb")
    status, _report, _out, err, _left = doctor_command(["nb.ipynb", "--epochs", "1"], tmp_path)
    assert status == 2 and err == "doctor: error: a notebook takes no arguments (got " \
        "--epochs 1)\n", err


PLUGIN_CELLS = [
    "import torch\nfrom torch.utils.data import DataLoader, Dataset\n"
    "from flake8_dlworker.pytest_plugin import DataLoaderDoctor",
    "class Squares(Dataset):\n    def __len__(self):\n        return 4\n\n"
    "    def __getitem__(self, i):\n        return torch.tensor(float(i))",
    "try:\n    DataLoaderDoctor('spawn').check(DataLoader(Squares(), num_workers=2))\n"
    "except BaseException as exc:\n    print('FAILED:', type(exc).__name__, exc)",
]


def test_the_pytest_check_names_a_class_from_a_notebook_cell(tmp_path):
    """As under ipytest: the fixture's check, called in a kernel, on a cell's class."""
    nbformat = pytest.importorskip("nbformat")
    book = _executed(nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c) for c in PLUGIN_CELLS]), tmp_path)
    text = "".join(out.get("text", "") for out in book.cells[2].outputs)
    assert text.startswith("FAILED: Failed DLW104 "), text
    assert "dataset: instance of class 'Squares' in an interactive session (a notebook " \
           "cell, IPython or the REPL), whose __main__ workers cannot import" in text, text
    assert "error: AttributeError: Can't get attribute 'Squares' on <module '__main__'" in text


@starts_torch
def _executed(book, folder):
    """``book`` run in a real Jupyter kernel whose cells start torch."""
    from nbclient import NotebookClient

    NotebookClient(book, timeout=PATIENCE_S, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    return book


HANG_CELLS = [
    "from torch.utils.data import DataLoader\nfrom dlw206_hang import Waiting",
    "for batch in DataLoader(Waiting(), batch_size=4, num_workers=1):\n"
    "    print(batch.sum().item())",
]


def test_timeout_ends_the_kernel_and_its_workers_and_names_the_stuck_worker(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    from fixture_markers import find

    shutil.copy(find("dlw206_hang.py"), tmp_path)
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in HANG_CELLS])
    nbformat.write(book, str(tmp_path / "hang.ipynb"))
    status, report, _out, err, left = run_doctor(["--json", "--timeout", "40", "hang.ipynb"],
                                                 tmp_path, limit=PATIENCE_S)
    assert not left, left  # the kernel and its worker were ended
    assert (status, report["outcome"]) == (1, "timeout"), err[-3000:]
    first = report["diagnoses"][0]
    assert (first["code"], first["path"], first["line"]) == ("DLW206", "dlw206_hang.py", 17), \
        report["diagnoses"]
    assert "\n6.0\n" in err  # the first batch, printed by the cell, came through
