"""What ``doctor check`` skips to be quick never changes what it reports.

A module whose text neither mentions what starts workers nor imports a module beside it
is not given to the plugin (:mod:`flake8_dlworker.prefilter`), and is only checked to be
valid Python (:func:`doctor.lint.parses`); a plain UTF-8 file is read without flake8's
file processor (:func:`doctor.lint.plain_text`); a file without ``noqa`` in it is not
tokenized for its ``# noqa`` lines. Each test compares ``check`` with real flake8 on
the cases at the edge of these shortcuts. Also here: the folders ``check`` searches
(flake8's, and nothing else), and ``--diff``/``--fix`` on a file with a byte order mark.
"""
import ast
import subprocess
from pathlib import Path

import pytest

from doctor import lint
from doctor_run import doctor_command
from flake8_dlworker.prefilter import may_report
from test_check_parity import check_set, flake8_set, write_tree

ROOT = Path(__file__).resolve().parent.parent
TRAINLIB = '''\
from torch.utils.data import DataLoader


def fit(data):
    for batch in DataLoader(data, num_workers=2):
        pass


def main():
    fit(list(range(8)))
'''
LAMBDA = '''\
from torch.utils.data import DataLoader

loader = DataLoader([1, 2], num_workers=2, collate_fn=lambda b: b)
'''


def _examples():
    """Every rule example, fixture and documented case the project keeps."""
    for folder in ("flake8_dlworker/causes", "fixtures"):
        yield from sorted((ROOT / folder).rglob("*.py"))


def test_every_example_the_plugin_reports_passes_the_prefilter():
    """The plugin itself, on each example: where it finds something, the text alone
    said it might."""
    from flake8.processor import FileProcessor

    from flake8_dlworker.plugin import DataLoaderWorkerChecker

    options = lint.load(lint.flake8_argv())
    reported = 0
    for path in _examples():
        processor = FileProcessor(str(path), options)
        text = "".join(processor.lines)
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        found = list(DataLoaderWorkerChecker(tree, str(path), processor.lines).run())
        reported += bool(found)
        assert not found or may_report(text, str(path)), (path, found)
    assert reported > 50  # the examples were read


SPELLINGS = {  # a runner that names no worker, only a module beside it
    "plain.py": "from trainlib import main\n\nmain()\n",
    "module.py": "import trainlib\n\ntrainlib.main()\n",
    "listed.py": "import os, \\\n    trainlib as t\n\nt.main()\n",
    "continued.py": "from \\\n    trainlib import main\nmain()\n",
    "nfkc.py": "import \uff54rainlib\n\ntrainlib.main()\n",  # a fullwidth t: NFKC reads t
    "tried.py": "try:\n    from trainlib import main\nexcept ImportError:\n    raise\nmain()\n",
    "relative.py": "from .trainlib import main\n\nmain()\n",  # not a module beside: none
    "other.py": "import os\n\nos.getcwd()\n",
}


@pytest.mark.parametrize("fmt", ["github", "sarif"])
def test_a_runner_that_only_imports_a_module_beside_is_checked(tmp_path, fmt):
    write_tree(tmp_path, dict(SPELLINGS, **{"trainlib.py": TRAINLIB}))
    expected = flake8_set(tmp_path)
    assert {path for path, _line, code in expected if code == "DLW101"} == {
        "plain.py", "module.py", "listed.py", "continued.py", "nfkc.py", "tried.py"}
    got, _out = check_set(tmp_path, fmt)
    assert got == expected


def test_noqa_in_any_case_is_read_as_flake8_reads_it(tmp_path):
    write_tree(tmp_path, {
        "upper.py": LAMBDA.replace("b: b)", "b: b)  # NOQA: DLW102"),
        "blanket.py": LAMBDA.replace("b: b)", "b: b)  # NoQa"),
        "wrong_code.py": LAMBDA.replace("b: b)", "b: b)  # noqa: DLW103"),
        "file.py": "# FLAKE8: NOQA\n" + LAMBDA,
        "in_string.py": LAMBDA.replace("[1, 2]", '"""\n# noqa\n"""'),
        "plain.py": LAMBDA})
    expected = flake8_set(tmp_path)
    # in_string.py: flake8 searches the whole logical line, string included
    assert {path for path, _line, _code in expected} == {"wrong_code.py", "plain.py"}
    for fmt in ("text", "github"):
        assert check_set(tmp_path, fmt)[0] == expected


BOM = b"\xef\xbb\xbf"
READINGS = {  # the bytes of a file, and whether check reads it without flake8's help
    "crlf": (b"x = 1\r\ny = 2\r\n", True),
    "cr": (b"x = 1\ry = 2\r", True),
    "mixed": (b"x = 1\r\n\r\r\n\ny = '\r'\n", True),
    "no-newline": (b"x = 1", True),
    "empty": (b"", True),
    "separators": ("x = 1\x0c\x0b\x1c\x1d\x1e\x85\u2028\u2029\n# \u00e9\n".encode(), True),
    "nul": (b"x = 1\0\n", True),
    "coding-later": (b"x = 1\ny = 2\n# coding: latin-1\n", True),
    "bom": (BOM + b"x = 1\r\n", False),
    "latin-1-cookie": (b"# -*- coding: latin-1 -*-\nx = '\xe9'\n", False),
    "cookie-second-line": (b"#!/usr/bin/env python\n# coding=utf-8\nx = 1\n", False),
    "not-utf-8": (b"x = '\xe9'\n", False),
    "bom-as-text": ("\u00ef\u00bb\u00bfx = 1\n".encode(), False),
}


@pytest.mark.parametrize("name", sorted(READINGS))
def test_a_file_read_without_flake8_reads_as_flake8_reads_it(tmp_path, name):
    """check reads a plain UTF-8 file itself (lint.plain_text); anything else is read
    by flake8's file processor. Where it reads, it reads the text flake8 reads."""
    from flake8.processor import FileProcessor

    data, plain = READINGS[name]
    path = tmp_path / "m.py"
    path.write_bytes(data)
    options = lint.load(lint.flake8_argv())
    text = lint.plain_text(str(path))
    assert (text is not None) == plain
    if text is not None:
        assert text == "".join(FileProcessor(str(path), options).lines)


def test_the_search_for_flake8_finds_what_ignorecase_finds():
    """lint._FLAKE8 spells out the letters re.IGNORECASE takes for ``flake8``: every
    character any Unicode code point matches there."""
    import itertools
    import re
    import sys

    every = "".join(chr(i) for i in range(sys.maxunicode + 1) if not 0xD800 <= i < 0xE000)
    variants = [re.findall("(?i)" + re.escape(letter), every) for letter in "flake8"]
    assert len(variants[3]) == 3  # k, K and the Kelvin sign
    for word in itertools.product(*variants):
        assert lint._FLAKE8.search("# %s: noqa" % "".join(word))
    assert not lint._FLAKE8.search("# flake: noqa 8")


def test_parses_is_never_true_where_ast_parse_fails():
    """The cheap check of a file the plugin skips: valid Python is taken, and anything
    ast.parse rejects (syntax, a tree too deep to build) goes to ast.parse."""
    shapes = [lambda n: "x = " + " + ".join(["1"] * n) + "\n",
              lambda n: "x = a" + ".f(k=1)" * n + "\n",
              lambda n: "x = " + "lambda a=" * n + "1" + ": 1" * n + "\n",
              lambda n: "x = " + "-" * n + "1\n",
              lambda n: "x = " + "1 if a else " * n + "1\n",
              lambda n: "x = " + "not " * n + "1\n",
              lambda n: "x = [" + "y for y in " * n + "z]\n"]
    for shape in shapes:
        for n in (1, 50, 200, 400, 700, 1000, 1500, 2000, 2500, 3000, 4000):
            text = shape(n)
            if lint.parses(text):
                ast.parse(text)  # must not raise
    assert lint.parses("import os\n\n\ndef f(x):\n    return [y for y in x]\n")
    assert not lint.parses("def f(:\n")
    assert not lint.parses("x = 1\0\n")
    assert not lint.parses("nonlocal x\n")  # ast.parse takes it: left to ast.parse
    ast.parse("nonlocal x\n")


def test_a_broken_or_too_deep_file_without_workers_is_still_a_warning(tmp_path):
    write_tree(tmp_path, {"broken.py": "import os\ndef f(:\n",
                          "deep.py": "x = " + " + ".join(["1"] * 5000) + "\n",
                          "long.py": "x = " + " + ".join(["1"] * 1000) + "\n",
                          "train.py": LAMBDA})
    status, _report, out, err, _left = doctor_command(["check", "--format", "github", "."],
                                                      tmp_path)
    assert status == 1 and "file=train.py" in out
    lines = sorted(err.splitlines())
    assert len(lines) == 2, err
    assert lines[0].startswith("doctor: warning: broken.py:2: not valid Python")
    assert lines[1].startswith("doctor: warning: deep.py: too deeply nested")


def test_folders_searched_are_flake8s(tmp_path):
    """flake8's default exclude list, and nothing more: a virtual environment, a build
    folder or node_modules is checked by both; Jupyter's checkpoints keep their Python
    files (flake8 reads them) but not their notebooks."""
    skipped = [".svn", "CVS", ".bzr", ".hg", ".git", "__pycache__", ".tox", ".nox", ".eggs",
               "pkg.egg"]
    kept = [".venv", "venv", "build", "dist", "node_modules", "site-packages",
            ".ipynb_checkpoints"]
    write_tree(tmp_path, {"%s/lib/m.py" % name: LAMBDA for name in skipped + kept})
    write_tree(tmp_path, {"train.py": LAMBDA,
                          ".ipynb_checkpoints/nb-checkpoint.ipynb": _notebook(LAMBDA)})
    expected = flake8_set(tmp_path)
    assert {path.split("/")[0] for path, _line, _code in expected} == set(kept) | {"train.py"}
    for fmt in ("github", "sarif"):
        assert check_set(tmp_path, fmt)[0] == expected


def _notebook(source):
    import json

    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None,
                                  "metadata": {}, "outputs": [],
                                  "source": source.splitlines(True)}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


CODED = b"# -*- coding: utf-8 -*-\n" + LAMBDA.encode()


@pytest.mark.parametrize("head", [BOM + CODED, BOM + LAMBDA.encode()],
                         ids=["bom-and-cookie", "bom"])
@pytest.mark.parametrize("tool", [["git", "apply"], ["patch", "-p1", "--batch"]],
                         ids=["git-apply", "patch"])
def test_diff_of_a_file_with_a_byte_order_mark_applies(tmp_path, head, tool):
    (tmp_path / "train.py").write_bytes(head)
    status, _report, diff, err, _left = doctor_command(
        ["check", "--diff", "train.py"], tmp_path)
    assert status == 1 and diff.startswith("--- a/train.py\n"), (diff, err)
    done = subprocess.run(tool, input=diff, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    fixed = (tmp_path / "train.py").read_bytes()
    assert fixed.startswith(head[:len(head) - len(LAMBDA)]) and b"lambda" not in fixed
    assert flake8_set(tmp_path) == set()


def test_fix_of_a_file_with_a_byte_order_mark_keeps_it(tmp_path):
    (tmp_path / "train.py").write_bytes(BOM + CODED)
    status, _report, _out, err, _left = doctor_command(
        ["check", "--fix", "train.py"], tmp_path)
    assert status == 0 and "fixed train.py" in err, err
    fixed = (tmp_path / "train.py").read_bytes()
    assert fixed.startswith(BOM + b"# -*- coding: utf-8 -*-\n") and b"lambda" not in fixed
    assert (tmp_path / "train.py.orig").read_bytes() == BOM + CODED
    assert flake8_set(tmp_path) == set()
    compile(fixed, "train.py", "exec")
