"""A Jupyter notebook read as one Python script, with the way back to its cells.

The checker analyses a module; a notebook is a list of cells that run one after the
other in the kernel's ``__main__``. So the code cells are put end to end into one
script, each cell's lines where they are, and every line of the script maps back to
(cell, line in that cell). IPython syntax is not Python: a line magic (``%env``), a
shell escape (``!pip``), a help request (``obj?``) becomes ``pass`` (``x = None`` for
``x = !ls``) on the same line, so every other line keeps its number and column. A cell
magic (``%%bash``) hands the whole cell to something else, and that cell is left out,
except the magics that run their body as Python in the kernel (``%%time``,
``%%timeit``, ``%%capture``). A cell that is not Python even then is left out too, as
nbqa leaves it out, and listed (``Notebook.skipped``): Jupyter runs the cells before it.

Cells are numbered as nbformat numbers them: ``index`` is the 0-based position in the
notebook's ``cells`` list, markdown cells included. ruff prints the same cell as
``cell index+1``; nbqa prints ``cell_N``, counting code cells only, from 1.

Reads the file with :mod:`json` only: nothing here needs nbformat, IPython or torch.
"""
import ast
import bisect
import json
import re
from json.decoder import scanstring
from typing import List, NamedTuple, Optional, Tuple

#: the major version of the notebook format this reader knows (4.0 to 4.5 exist)
FORMAT = 4
#: cell magics whose body is Python run in the kernel's namespace, like any cell
PYTHON_CELL_MAGICS = frozenset(("time", "timeit", "capture"))
#: the first line of the temporary script nbqa writes for a notebook (``nbqa flake8``)
NBQA_SEPARATOR = "# %%NBQA-CELL-SEP"

_ESCAPE = re.compile(r"(\s*)[%!]")
_ASSIGNED_ESCAPE = re.compile(r"(\s*)([\w.]+(?:\s*,\s*[\w.]+)*)\s*=\s*[%!]")
_HELP = re.compile(r"(\s*)(\?{1,2}\S+|[^\s#?]+\?{1,2})\s*$")


class NotebookError(ValueError):
    """The file is not a notebook this reader can check; the message says why in a few
    words, without the path (the caller names it)."""


class Cell(NamedTuple):
    index: int      # position in the notebook's cells, 0-based, markdown cells included
    source: str     # the cell's text as the notebook stores it
    start: int      # the line of the script where the cell's first line is
    length: int     # how many lines of the script it takes


class Skipped(NamedTuple):
    """A code cell left out because it is not valid Python: where, and the error."""
    index: int
    line: int
    reason: str


class Notebook:
    """The code cells as one script (``source``), and where each line came from."""

    __slots__ = ("source", "cells", "skipped", "_starts")

    def __init__(self, source, cells, skipped):
        self.source = source
        self.cells = cells      # the cells in the script, in order
        self.skipped = skipped  # the code cells that are not valid Python, in order
        self._starts = [cell.start for cell in cells]

    def locate(self, line) -> Optional[Tuple[int, int]]:
        """(cell index, line in that cell) of a line of the script, or None."""
        at = bisect.bisect_right(self._starts, line) - 1
        if at < 0 or line >= self.cells[at].start + self.cells[at].length:
            return None
        cell = self.cells[at]
        return cell.index, line - cell.start + 1

    def cell(self, index) -> Optional[Cell]:
        for cell in self.cells:
            if cell.index == index:
                return cell
        return None


def is_notebook(path):
    return str(path).endswith(".ipynb")


def cell_name(cell):
    """``cell 3``: a cell as people read it and ruff prints it, counted from 1 (``cell``
    is the 0-based index)."""
    return "cell %d" % (cell + 1)


def cell_place(cell, line):
    """``cell 3:12``: a line of a notebook's cell, as ruff prints it."""
    return "%s:%d" % (cell_name(cell), line)


def is_nbqa_script(lines):
    """True for the script nbqa writes for a notebook: its first line separates cells."""
    return bool(lines) and lines[0].startswith(NBQA_SEPARATOR)


def read(path) -> Notebook:
    """The notebook at ``path``; OSError when it cannot be read, NotebookError when it
    is not a notebook."""
    with open(path, "rb") as handle:
        return parse(handle.read())


def parse(data) -> Notebook:
    """A notebook from the bytes of an ``.ipynb`` file (NotebookError when it is not)."""
    cells = _cells(_document(data))
    script, placed, skipped = [], [], []
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        text = _text(cell.get("source"), index)
        if not text.strip():
            continue
        lines, problem = _python_lines(text)
        if problem is not None:
            skipped.append(Skipped(index, *problem))
        elif lines:
            placed.append(Cell(index, text, len(script) + 1, len(lines)))
            script.extend(lines)
    return Notebook("".join(line + "\n" for line in script), placed, skipped)


def _python_lines(text) -> Tuple[List[str], Optional[Tuple[int, str]]]:
    """(the lines of a cell that is not blank, as Python; None). ([], None) for a cell
    magic that does not run Python; ([], (line, error)) for a cell that is not Python."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()
    first = next(i for i, line in enumerate(lines) if line.strip())
    header = lines[first].strip()
    if header.startswith("%%"):
        if (header[2:].split() or [""])[0] not in PYTHON_CELL_MAGICS:
            return [], None
        lines[first] = _placeholder(lines[first])
    problem = _syntax_error(lines)
    if problem is None:
        return lines, None
    lines = [_placeholder(line) if _is_ipython(line) else line for line in lines]
    problem = _syntax_error(lines)
    return (lines, None) if problem is None else ([], problem)


def _is_ipython(line):
    return bool(_ESCAPE.match(line) or _ASSIGNED_ESCAPE.match(line) or _HELP.match(line))


def _placeholder(line):
    """A line of IPython syntax as Python that binds what it binds and does nothing;
    the original stays in a comment, for a traceback or an excerpt that shows it."""
    assigned = _ASSIGNED_ESCAPE.match(line)
    if assigned:
        return "%s%s = None  # %s" % (assigned.group(1), assigned.group(2), line.strip())
    indent = line[:len(line) - len(line.lstrip())]
    return "%spass  # %s" % (indent, line.strip())


def _syntax_error(lines):
    """None when the lines are Python, else (line, 'not valid Python: why')."""
    try:
        ast.parse("\n".join(lines) + "\n")
    except SyntaxError as exc:
        return exc.lineno or 1, "not valid Python: %s" % exc.msg
    except (ValueError, RecursionError, MemoryError) as exc:
        return 1, "not valid Python: %s" % type(exc).__name__
    return None


def _document(data):
    """The notebook's JSON object, after the checks that give the clearest reason."""
    if not data.strip():
        raise NotebookError("is empty, not a notebook")
    if b"\0" in data[:8192]:
        raise NotebookError("is a binary file, not a notebook")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise NotebookError("is not a notebook: not UTF-8 text")
    try:
        document = json.loads(text)
    except ValueError as exc:  # json.JSONDecodeError, or a number too long to read
        where = getattr(exc, "lineno", None)
        raise NotebookError("is not a notebook: not valid JSON%s: %s" % (
            " (line %d, column %d)" % (where, exc.colno) if where else "",
            getattr(exc, "msg", exc)))
    except RecursionError:
        raise NotebookError("is not a notebook: JSON nested too deeply")
    if not isinstance(document, dict):
        raise NotebookError("is not a notebook: the JSON is a %s, not an object"
                            % type(document).__name__)
    return document


def _cells(document):
    version = document.get("nbformat")
    if not isinstance(version, int) or isinstance(version, bool):
        raise NotebookError("is not a notebook: no nbformat version")
    if version > FORMAT:
        raise NotebookError("is nbformat %d, newer than this checker reads (%d.x)"
                            % (version, FORMAT))
    if version < FORMAT:
        raise NotebookError("is nbformat %d, older than this checker reads (%d.x); open "
                            "and save it in Jupyter to convert it" % (version, FORMAT))
    cells = document.get("cells")
    if not isinstance(cells, list) or not all(isinstance(cell, dict) for cell in cells):
        raise NotebookError("is not a notebook: no list of cells")
    language = _language(document.get("metadata"))
    if language is not None and "python" not in language.lower():
        raise NotebookError("is not a Python notebook (its language is %s)" % language)
    return cells


def _language(metadata):
    """The kernel's language, or None where the notebook does not say."""
    if not isinstance(metadata, dict):
        return None
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        value = metadata.get(key)
        if isinstance(value, dict) and isinstance(value.get(field), str):
            return value[field]
    return None


def _text(source, index):
    """A cell's source, which nbformat stores as one string or a list of lines."""
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    raise NotebookError("is not a notebook: cell %d has no source text" % index)


# -- where a cell's line is in the .ipynb file ---------------------------------------

class FilePlace(NamedTuple):
    """A place in the ``.ipynb`` file itself, as CI tools read it: 1-based line, and
    columns counted in characters (code points) of that line of JSON text."""
    line: int
    column: int
    end_column: int


_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class _Strings:
    """The JSON strings of each code cell's ``source`` in the file's text, with the
    line and column where each one's first character (after the quote) is."""

    def __init__(self, text):
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.cells = {}  # cell index -> [(line, column, index of the first character)]
        self._object(_WS.match(text).end(), self._top)

    def _ws(self, i):
        return _WS.match(self.text, i).end()

    def _object(self, i, member):
        """Walk the object at ``i``; ``member(key, start)`` returns the value's end."""
        i = self._ws(i + 1)
        while self.text[i] != "}":
            key, i = scanstring(self.text, i + 1)
            i = member(key, self._ws(self._ws(i) + 1))
            i = self._ws(i)
            if self.text[i] == ",":
                i = self._ws(i + 1)
        return i + 1

    def _array(self, i, item):
        i, n = self._ws(i + 1), 0
        while self.text[i] != "]":
            i = self._ws(item(n, i))
            n += 1
            if self.text[i] == ",":
                i = self._ws(i + 1)
        return i + 1

    def _skip(self, _key, i):
        return _DECODER.raw_decode(self.text, i)[1]

    def _top(self, key, i):
        return self._array(i, self._cell) if key == "cells" else self._skip(key, i)

    def _cell(self, index, i):
        def member(key, j):
            if key != "source":
                return self._skip(key, j)
            if self.text[j] == '"':
                return self._string(index, j)
            return self._array(j, lambda _n, k: self._string(index, k))
        return self._object(i, member)

    def _string(self, index, i):
        line = bisect.bisect_right(self.starts, i)
        self.cells.setdefault(index, []).append((line, i + 1 - self.starts[line - 1] + 1, i + 1))
        return scanstring(self.text, i + 1)[1]


def _chars(text, i):
    """(index in ``text``, decoded character) for each character of the JSON string
    whose first character is at ``i``, up to its closing quote."""
    while text[i] != '"':
        if text[i] != "\\":
            yield i, text[i]
            i += 1
            continue
        if text[i + 1] != "u":
            yield i, json.loads('"%s"' % text[i:i + 2])
            i += 2
            continue
        size = 12 if (0xD800 <= int(text[i + 2:i + 6], 16) < 0xDC00
                      and text[i + 6:i + 8] == "\\u") else 6
        yield i, json.loads('"%s"' % text[i:i + size])
        i += size
    yield i, None  # the closing quote


def file_places(data):
    """``place(cell, line, column) -> FilePlace or None``: where a line of a cell (and a
    column in it, counted in characters from 1) is in the ``.ipynb`` file's own text,
    its end being the end of that line; None when it is not there, or for a file this
    reader cannot walk."""
    try:
        strings = _Strings(data.decode("utf-8-sig"))
    except (ValueError, IndexError, UnicodeDecodeError, RecursionError):
        return lambda cell, line, column: None

    def place(cell, line, column):
        at_line, at_column = 1, 1
        for file_line, file_column, first in strings.cells.get(cell, ()):
            start = None
            for i, char in _chars(strings.text, first):
                if (at_line, at_column) == (line, column):
                    start = i
                if at_line == line and start is not None and char in (None, "\n"):
                    return FilePlace(file_line, file_column + start - first,
                                     file_column + i - first)
                if char == "\n":
                    at_line, at_column = at_line + 1, 1
                elif char is not None:
                    at_column += 1
        return None
    return place
