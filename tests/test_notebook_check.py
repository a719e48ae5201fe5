"""Static checking of Jupyter notebooks: ``doctor check NB.ipynb`` and ``nbqa flake8``.

Each fixture notebook in fixtures/notebooks/ marks its findings in its code cells with
``# DLW1xx: COL`` on the flagged line of the cell. Both tools must report exactly those:
the doctor at (cell index, line in the cell, column), nbqa at its own ``cell_N`` (code
cells counted from 1). The doctor's text names the cell as ruff does, counted from 1.
"""
import json
import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import jsonschema
import pytest

from doctor_run import doctor_command
from fixture_markers import FIXTURES, MARKER, expected_findings, find, fixture_files
from flake8_dlworker.notebook import NotebookError, parse

NOTEBOOKS = FIXTURES / "notebooks"
SCHEMA = Path(__file__).parent / "sarif" / "sarif-schema-2.1.0.json"
nbqa = pytest.mark.skipif(find_spec("nbqa") is None, reason="nbqa is not installed here")


def notebooks():
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def _code_cells(path):
    """[(cell index, its text)] for the code cells, in order."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(index, "".join(cell["source"])) for index, cell in enumerate(cells)
            if cell["cell_type"] == "code"]


def marked(path):
    """{(cell index, line in the cell, column, code)} from the markers in the cells."""
    found = set()
    for index, text in _code_cells(path):
        for line, row in enumerate(text.splitlines(), 1):
            for code, col in MARKER.findall(row):
                found.add((index, line, int(col), code))
    return found


def notebook(*cells, nbformat=4, minor=5, metadata=None):
    """A notebook's JSON text: a string is a code cell, ("markdown", text) another kind."""
    made = []
    for cell in cells:
        kind, text = cell if isinstance(cell, tuple) else ("code", cell)
        made.append({"cell_type": kind, "metadata": {}, "source": text.splitlines(True),
                     **({"outputs": [], "execution_count": None} if kind == "code" else {})})
    return json.dumps({"cells": made, "metadata": metadata or {}, "nbformat": nbformat,
                       "nbformat_minor": minor})


def test_every_fixture_notebook_marks_a_finding_or_is_clean():
    for path in notebooks():
        assert bool(marked(path)) != path.name.startswith("clean_"), path.name
    assert {code for path in notebooks() for *_, code in marked(path)} == {
        "DLW102", "DLW103", "DLW104", "DLW108"}


def test_the_module_beside_the_notebooks_is_a_silent_fixture():
    """fixtures/notebooks/nb_data.py is checked with the other fixtures and has no marker."""
    module = NOTEBOOKS / "nb_data.py"
    assert module in fixture_files() and expected_findings(module) == set()


# -- doctor check ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def github_lines():
    """One ``check --format github`` of the folder: it finds the notebooks in it."""
    status, _report, out, err, _left = doctor_command(["check", "--format", "github", "."],
                                                      NOTEBOOKS)
    assert status == 1 and err == "", err
    return out.splitlines()


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.name)
def test_check_json_reports_the_marked_cells_and_lines(path):
    status, report, _out, err, _left = doctor_command(["check", "--json", path.name], NOTEBOOKS)
    want = marked(path)
    assert status == (1 if want else 0), err
    got = {(d["path"], d["cell"], d["line"], d["code"]) for d in report["diagnoses"]}
    assert got == {(path.name, cell, line, code) for cell, line, _col, code in want}
    for diag in report["diagnoses"]:  # the evidence names the cell as ruff does
        assert diag["evidence"][0].startswith("%s:cell %d:%d: %s " % (
            path.name, diag["cell"] + 1, diag["line"], diag["code"]))


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.name)
def test_check_github_reports_the_marked_columns(path, github_lines):
    """GitHub reads ``line`` and ``col`` in the .ipynb file it names: they point at the
    JSON text of the cell's line, from the marked column to that line's end; the message
    names the cell and the line in it."""
    got = [line for line in github_lines if "file=%s," % path.name in line]
    places = set()
    for command in got:
        cell, row, fields, code = _github_place(command)
        shown = _ipynb_text(path, int(fields["line"]), int(fields["col"]),
                            int(fields["endColumn"]))
        source = dict(_code_cells(path))[cell].splitlines()[row - 1]
        col = len(source) - len(shown) + 1
        assert source[col - 1:] == shown
        places.add((cell, row, col, code))
    assert places == marked(path)


def _github_place(line):
    """(cell index, line in the cell, the command's fields, code) of ``::error
    file=..,line=..,col=..,endColumn=..,title=..::cell N:L: ...``."""
    head, message = line.split("::", 2)[1:]
    fields = dict(part.split("=", 1) for part in head.split(" ", 1)[1].split(","))
    number, row = message.split(":", 2)[:2]
    return int(number.replace("cell ", "")) - 1, int(row), fields, fields["title"]


def _ipynb_text(path, line, col, end_col):
    """The text a place in the .ipynb file covers, decoded from its JSON string."""
    raw = path.read_text(encoding="utf-8").splitlines()[line - 1][col - 1:end_col - 1]
    return json.loads('"%s"' % raw)


def test_check_text_names_the_cell_and_shows_its_lines():
    status, _report, out, err, _left = doctor_command(
        ["check", "dlw104_dataset_in_cell.ipynb"], NOTEBOOKS)
    assert status == 1, err
    assert "  at dlw104_dataset_in_cell.ipynb:cell 3:1\n" in out
    assert "  >    1 | class Squares(Dataset):  # DLW104: 7\n" in out
    assert "dlw104_dataset_in_cell.ipynb:cell 3:1: DLW104 class 'Squares' defined in a " \
           "notebook cell reaches a worker" in out


def test_check_sarif_for_a_notebook_validates():
    """The region is on the .ipynb file's line that holds the cell's line (the test reads
    the file there); the cell and the line in it are properties."""
    path = NOTEBOOKS / "dlw108_h5py_handle.ipynb"
    status, _report, out, err, _left = doctor_command(
        ["check", "--format", "sarif", path.name], NOTEBOOKS)
    assert status == 1, err
    log = json.loads(out)
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    got = set()
    for result in log["runs"][0]["results"]:
        region = result["locations"][0]["physicalLocation"]["region"]
        cell, row = result["properties"]["cell"], result["properties"]["cellLine"]
        source = dict(_code_cells(path))[cell].splitlines()[row - 1]
        shown = _ipynb_text(path, region["startLine"], region["startColumn"],
                            region["endColumn"])
        assert source.endswith(shown) and region["endLine"] == region["startLine"]
        got.add((cell, row, len(source) - len(shown) + 1, result["ruleId"]))
        assert result["message"]["text"].startswith("%s cell 4:%d: " % (result["ruleId"], row))
    assert got == marked(path)


BAD = {
    "empty.ipynb": (b"", "is empty, not a notebook"),
    "blank.ipynb": (b"  \n", "is empty, not a notebook"),
    "binary.ipynb": (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "is a binary file, not a notebook"),
    "latin1.ipynb": ('{"cells": "café"}'.encode("latin-1"), "is not a notebook: not UTF-8 text"),
    "truncated.ipynb": (b'{"cells": [', "is not a notebook: not valid JSON (line 1, column 12)"),
    "list.ipynb": (b"[1, 2]", "is not a notebook: the JSON is a list, not an object"),
    "nocells.ipynb": (b'{"nbformat": 4, "nbformat_minor": 5}',
                      "is not a notebook: no list of cells"),
    "noversion.ipynb": (b'{"cells": []}', "is not a notebook: no nbformat version"),
    "future.ipynb": (notebook("x = 1", nbformat=5, minor=0).encode(),
                     "is nbformat 5, newer than this checker reads (4.x)"),
    "old.ipynb": (b'{"nbformat": 3, "nbformat_minor": 0, "worksheets": []}',
                  "is nbformat 3, older than this checker reads (4.x); open and save it in "
                  "Jupyter to convert it"),
    "r.ipynb": (notebook("x <- 1", metadata={"language_info": {"name": "R"}}).encode(),
                "is not a Python notebook (its language is R)"),
    "badcell.ipynb": (b'{"nbformat": 4, "nbformat_minor": 5, "cells": '
                      b'[{"cell_type": "code", "source": 3}]}',
                      "is not a notebook: cell 0 has no source text"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_notebook_is_one_line_and_exit_2(name, tmp_path):
    data, reason = BAD[name]
    (tmp_path / name).write_bytes(data)
    status, _report, out, err, _left = doctor_command(["check", name], tmp_path)
    assert (status, out) == (2, "")
    assert err.startswith("doctor: error: %s: %s" % (name, reason)), err
    assert len(err.splitlines()) == 1, err


def test_bad_notebook_in_a_folder_is_skipped_with_a_warning(tmp_path):
    shutil.copy(NOTEBOOKS / "dlw104_dataset_in_cell.ipynb", tmp_path / "nb.ipynb")
    (tmp_path / "broken.ipynb").write_bytes(b"{")
    checkpoints = tmp_path / ".ipynb_checkpoints"  # Jupyter's saved copies: never searched
    checkpoints.mkdir()
    shutil.copy(NOTEBOOKS / "dlw102_collate_lambda.ipynb", checkpoints / "nb-checkpoint.ipynb")
    status, _report, out, err, _left = doctor_command(["check", "--format", "github", "."],
                                                      tmp_path)
    assert status == 1 and out.count("\n") == 1
    assert "file=nb.ipynb," in out and "title=DLW104::cell 3:1: class 'Squares'" in out
    assert err.startswith("doctor: warning: broken.ipynb: is not a notebook: not valid JSON")
    assert err.endswith(" (skipped)\n") and len(err.splitlines()) == 1


def test_cells_that_are_not_python_are_warned_about_and_the_rest_checked(tmp_path):
    """A broken cell is left out (as nbqa leaves it out) with a warning at its place; the
    other cells are still checked, even when the notebook is named."""
    source = notebook(("markdown", "# data"), "def f(:\n    pass\n",
                      "from torch.utils.data import DataLoader\n"
                      "loader = DataLoader([1], num_workers=2, collate_fn=lambda b: b)\n")
    (tmp_path / "nb.ipynb").write_text(source)
    status, _report, out, err, _left = doctor_command(["check", "--format", "github", "nb.ipynb"],
                                                      tmp_path)
    # the notebook is one line of JSON: the lambda is on line 1 of the file, in cell 3:2
    assert status == 1 and "file=nb.ipynb,line=1," in out, (out, err)
    assert "title=DLW102::cell 3:2: lambda" in out, (out, err)
    assert err.startswith("doctor: warning: nb.ipynb:cell 2:1: not valid Python: ")
    assert err.endswith(" (skipped)\n") and len(err.splitlines()) == 1


def test_fix_and_diff_refuse_a_notebook(tmp_path):
    shutil.copy(NOTEBOOKS / "dlw102_collate_lambda.ipynb", tmp_path / "nb.ipynb")
    before = (tmp_path / "nb.ipynb").read_bytes()
    for option in ("--fix", "--diff"):
        status, _report, out, err, _left = doctor_command(["check", option, "nb.ipynb"], tmp_path)
        assert (status, out) == (2, "")
        assert err == "doctor: error: nb.ipynb: check --fix and --diff patch Python files, " \
                      "not notebooks; the findings say what to change\n"
    assert (tmp_path / "nb.ipynb").read_bytes() == before


def test_fix_on_a_folder_leaves_its_notebooks_alone(tmp_path):
    shutil.copy(NOTEBOOKS / "dlw102_collate_lambda.ipynb", tmp_path / "nb.ipynb")
    shutil.copy(find("dlw102_collate.py"), tmp_path / "train.py")
    before = (tmp_path / "nb.ipynb").read_bytes()
    status, _report, out, err, _left = doctor_command(["check", "--fix", "."], tmp_path)
    assert status == 1, err
    assert (tmp_path / "nb.ipynb").read_bytes() == before
    assert (tmp_path / "train.py").read_text() != find("dlw102_collate.py").read_text()
    assert "nb.ipynb:cell 3:3" in out and "train.py" not in out  # what is left


# -- reading a notebook ---------------------------------------------------------------

def test_magics_shell_escapes_and_help_keep_every_line_in_place():
    source = notebook(
        ("markdown", "# title"),
        "%matplotlib inline\nimport torch\n!echo hi\nfiles = !ls\ntorch?\n??torch\n",
        "%%bash\necho not python\n",
        "%%time\nfor i in range(2):\n    %time x = i\n    !echo $i\n",
        "%%capture out\nfrom torch.utils.data import DataLoader\n",
        "   \n",
        ("raw", "not code"),
    )
    book = parse(source.encode())
    assert [(c.index, c.start, c.length) for c in book.cells] == [(1, 1, 6), (3, 7, 4), (4, 11, 2)]
    assert book.skipped == []
    lines = book.source.splitlines()
    assert lines[1] == "import torch" and lines[3] == "files = None  # files = !ls"
    assert lines[8:10] == ["    pass  # %time x = i", "    pass  # !echo $i"]
    assert book.locate(9) == (3, 3) and book.locate(12) == (4, 2)
    assert book.locate(13) is None and book.locate(0) is None


def test_a_cell_that_parses_is_taken_as_it_is():
    """``%`` at the start of a continuation line is Python: a cell that parses keeps it."""
    book = parse(notebook("x = (10\n     % 3)\n").encode())
    assert book.source == "x = (10\n     % 3)\n"


def test_a_cell_that_is_not_python_is_listed_and_left_out():
    book = parse(notebook("x = 1", "y = (\n", "z = 2").encode())
    assert [(c.index, c.start) for c in book.cells] == [(0, 1), (2, 2)]
    (skipped,) = book.skipped
    assert skipped[:2] == (1, 1) and skipped.reason.startswith("not valid Python: ")


def test_nbformat_4_0_without_cell_ids_and_a_string_source():
    data = json.dumps({"cells": [{"cell_type": "code", "source": "a = 1\nb = 2",
                                  "metadata": {}, "outputs": []}],
                       "metadata": {"kernelspec": {"language": "python"}},
                       "nbformat": 4, "nbformat_minor": 0})
    assert parse(data.encode()).source == "a = 1\nb = 2\n"
    with pytest.raises(NotebookError):
        parse(b"null")


def test_the_lint_side_reads_notebooks_without_torch_or_nbformat():
    """flake8_dlworker.notebook, the plugin and doctor.static need neither torch, nor
    nbformat, nor IPython: they are made unimportable here."""
    code = "\n".join([
        "import sys",
        "for name in ('torch', 'nbformat', 'nbclient', 'IPython', 'ipykernel'):",
        "    sys.modules[name] = None",
        "from doctor.static import static_findings",
        "found = static_findings(%r)" % str(NOTEBOOKS / "dlw104_dataset_in_cell.ipynb"),
        "print([(f['cell'], f['line'], f['col'], f['code']) for f in found])",
    ])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[(2, 1, 7, 'DLW104')]"


# -- nbqa -----------------------------------------------------------------------------

@nbqa
def test_nbqa_flake8_reports_the_markers_at_its_cells(tmp_path):
    """nbqa writes a script beside each notebook (a copy here: the fixtures folder is
    linted by other tests meanwhile); the plugin sees nbqa's cell separators and checks
    it as a notebook."""
    folder = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, folder)
    files = sorted(p.name for p in folder.iterdir())
    out = subprocess.run([sys.executable, "-m", "nbqa", "flake8", ".", "--isolated",
                          "--select", "DLW"], cwd=folder, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 1 and out.stderr == "", out.stderr
    got = {}
    for line in out.stdout.splitlines():
        path, cell, row, col, message = line.split(":", 4)
        got.setdefault(path, set()).add(
            (int(cell.replace("cell_", "")), int(row), int(col), message.split()[0]))
    want = {}
    for path in notebooks():
        ordinal = {index: n for n, (index, _text) in enumerate(_code_cells(path), 1)}
        if marked(path):
            want[path.name] = {(ordinal[cell], row, col, code)
                               for cell, row, col, code in marked(path)}
    assert got == want
    assert sorted(p.name for p in folder.iterdir()) == files  # nbqa removed its scripts
