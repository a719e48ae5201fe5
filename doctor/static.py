"""The checker's findings on a file, as the evidence record carries them.

A notebook (``.ipynb``) is checked as its code cells end to end
(:mod:`flake8_dlworker.notebook`). Its findings carry ``cell``, the cell's 0-based
index in the notebook (nbformat's, markdown cells counted), and ``line`` is the line in
that cell; people read the cell counted from 1, as ruff prints it
(:func:`flake8_dlworker.notebook.cell_place`).
"""
import ast

from doctor.named_file import unreadable
from flake8_dlworker.notebook import NotebookError, cell_place, is_notebook, parse
from flake8_dlworker.plugin import findings


def static_findings(path, start_method="spawn", source=None):
    """[{path, line, col, code, text}] for one Python file; [] when it cannot be read.

    ``source``: the file's bytes, already read (and vetted) by the caller."""
    return file_findings(path, start_method, source=source)[0]


def file_findings(path, start_method="spawn", source=None):
    """(findings, problems): each problem is a one-line reason that the file, or a
    notebook's cell, was not checked (``doctor check`` has its own loop:
    :mod:`doctor.lint`). ``source``: the file's bytes, already read (and vetted) by the
    caller."""
    try:
        if source is None:
            with open(path, "rb") as handle:
                source = handle.read()
    except OSError as exc:
        return [], [unreadable(path, exc)]
    if is_notebook(path):
        return _notebook_findings(path, source, start_method)
    try:
        tree = ast.parse(source, path)
    except SyntaxError as exc:
        return [], ["%s:%s: not valid Python: %s" % (path, exc.lineno, exc.msg)]
    except ValueError as exc:
        return [], ["%s: not a Python file: %s" % (path, exc)]
    return [{"path": path, "line": f.line, "col": f.col + 1, "code": f.code, "text": f.text}
            for f in findings(tree, path, start_method)], []


def _notebook_findings(path, data, start_method):
    """(findings, problems) for a notebook's bytes: each finding at its cell and line; a
    cell that is not valid Python is a problem, and the other cells are still checked."""
    try:
        book, tree = parse_notebook(path, data)
    except ValueError as exc:
        return [], [str(exc)]
    problems = ["%s:%s: %s" % (path, cell_place(cell, line), why)
                for cell, line, why in book.skipped]
    found = []
    for f in findings(tree, path, start_method, notebook=True):
        cell, line = book.locate(f.line)
        found.append({"path": path, "cell": cell, "line": line, "col": f.col + 1,
                      "code": f.code, "text": f.text})
    return found, problems


class NotANotebook(ValueError):
    """The one-line reason, naming the file; ``reason`` without its path."""

    def __init__(self, path, reason):
        super().__init__("%s: %s" % (path, reason))
        self.reason = reason


class NotebookSyntaxError(NotANotebook):
    """Each cell parses, but the cells do not make one module: where, in which cell."""

    def __init__(self, path, cell, line, msg):
        ValueError.__init__(self, "%s:%s: not valid Python: %s" % (
            path, cell_place(cell, line), msg))
        self.cell, self.line, self.reason = cell, line, "not valid Python: %s" % msg


def parse_notebook(path, data):
    """(Notebook, its syntax tree); :class:`NotANotebook`, with a one-line reason that
    names ``path``, when the file is not a notebook or its cells do not make one module."""
    try:
        book = parse(data)
    except NotebookError as exc:
        raise NotANotebook(path, str(exc))
    try:
        return book, ast.parse(book.source, path)
    except SyntaxError as exc:  # each cell parses alone: the cells do not fit together
        cell, line = book.locate(exc.lineno or 1) or (book.cells[-1].index, 1)
        raise NotebookSyntaxError(path, cell, line, exc.msg)
