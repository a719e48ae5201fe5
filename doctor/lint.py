"""``doctor check``'s findings: flake8's own configuration and decisions, this package's
checker on each file.

flake8 decides what is reported: its option parser reads the configuration as flake8
does (``setup.cfg``, ``tox.ini``, ``.flake8``, ``--config``, ``--append-config``,
``--isolated``) and hands the plugin its ``--dlw-*`` options; its style guide applies
``select``/``ignore``/``extend-ignore``, the codes that are off by default,
``per-file-ignores``, ``# noqa`` and ``--disable-noqa``. The findings themselves come
from the plugin class flake8 loads, on each file read by flake8's own file processor
(coding cookie, BOM, latin-1 fallback, ``# flake8: noqa``). So ``doctor check`` and
``flake8 --select DLW`` cannot disagree. (A plain UTF-8 file that the plugin cannot
report on is read without the file processor: :func:`plain_text` gives the same text.)

The loop over the files is this module's, not flake8's checker manager: flake8 runs
every installed plugin whatever ``--select`` says (pycodestyle tokenizes every line),
ends the whole run when one file's tree is too deep to build (RecursionError), and reads
no notebook. Here each file is checked on its own: any failure to read or analyse it is
a :class:`Problem` for that file, and the other files are still checked.
"""
import codecs
import gc
import os
import re
import stat
import sys
from typing import List, NamedTuple, Optional

from doctor.sources import NOTEBOOK, Problem, files_under
from flake8_dlworker.untrusted import inert_line

#: the largest file checked; a bigger one is skipped before it is read
MAX_FILE_BYTES = 32 * 1024 * 1024
#: below this many files one process is quicker than starting a pool
PARALLEL_FROM = 32
#: files handed to a worker process at a time
CHUNK = 8

#: flake8's ``# flake8: noqa`` and ``# noqa`` patterns (defaults.NOQA_FILE and
#: NOQA_INLINE_REGEXP) both hold these words, matched as they match them (IGNORECASE): a
#: file without the word gives flake8's answer without its search line by line. The
#: characters IGNORECASE takes for each letter of ``flake8`` are spelled out (K: the
#: Kelvin sign too), after the ``8``, so that the search runs from that one character
#: instead of trying each position of the text
_FLAKE8 = re.compile("8(?<=[Ff][Ll][Aa][Kk\u212a][Ee]8)")
_NOQA = re.compile("noqa", re.IGNORECASE)
#: the options of the files' worker processes: (flake8 argv, parsed options)
_STATE = {}


class Raw(NamedTuple):
    """A finding as the plugin reports it, before flake8 decides: ``col`` counts UTF-8
    bytes from 0, ``noqa_line`` is the text flake8 searches for ``# noqa``; a notebook's
    finding also has its cell (0-based index) and the line in that cell."""
    code: str
    line: int
    col: int
    text: str
    noqa_line: Optional[str]
    cell: Optional[int] = None
    cell_line: Optional[int] = None


class Checked(NamedTuple):
    path: str
    found: List[Raw]
    problems: List[Problem]


class Report(NamedTuple):
    """What ``check`` shows: the findings flake8 reports, the files not checked, and the
    options flake8 resolved (``dlw_start_method``, ``disable_noqa``...)."""
    findings: list
    problems: List[Problem]
    options: object


def flake8_argv(config=None, isolated=False, start_method=None):
    """The flake8 command line whose configuration ``check`` uses: ``--select DLW``, as
    the documented ``flake8 --select DLW``."""
    argv = ["--select", "DLW"]
    if config:
        argv += ["--config", config]
    if isolated:
        argv.append("--isolated")
    if start_method:
        argv += ["--dlw-start-method", start_method]
    return argv


def load(argv):
    """flake8's options for ``argv`` (this process's plugin options set from them);
    ValueError with flake8's own words when the configuration is bad."""
    from flake8.options.parse_args import parse_args

    if _STATE.get("argv") != argv:
        try:
            _plugins, options = parse_args(argv)
        except SystemExit as exc:  # argparse's error, already printed on stderr
            raise ValueError("flake8 rejected its configuration (exit %s)" % exc.code)
        except Exception as exc:  # flake8's configuration errors, in one line
            raise ValueError("flake8's configuration: %s" % "; ".join(
                line.strip() for line in str(exc).splitlines() if line.strip()))
        _STATE.update(argv=argv, options=options)
    return _STATE["options"]


def guide(options):
    """flake8's style guide for ``options``; its ``handle_error`` returns 1 when flake8
    would report the finding, 0 when the configuration or a ``# noqa`` silences it."""
    from flake8.formatting.base import BaseFormatter
    from flake8.style_guide import StyleGuideManager

    class Silent(BaseFormatter):
        def handle(self, error):
            pass

    return StyleGuideManager(options, Silent(options))


def reported(decide, path, raw):
    """True when flake8 reports ``raw`` in ``path`` (``decide``: :func:`guide`'s)."""
    return bool(decide.handle_error(raw.code, path, raw.line, raw.col, raw.text,
                                    raw.noqa_line))


def discover(paths, options, exclude=None, extend_exclude=()):
    """(files, problems): the files flake8 would check under ``paths`` and the notebooks
    beside them. ``exclude`` replaces flake8's exclude setting (None: keep it), as
    flake8's ``--exclude`` does."""
    from flake8 import utils

    patterns = list(options.exclude) if exclude is None else list(exclude)
    patterns += list(options.extend_exclude) + list(extend_exclude)
    return files_under(paths, utils.normalize_paths(patterns),
                       list(options.filename) + [NOTEBOOK])


def check_file(path, options):
    """:class:`Checked` for one file; never raises for the file's own sake."""
    try:
        size = _regular_size(path)
        if size > MAX_FILE_BYTES:
            return _failed(path, "is %d MB, larger than the %d MB a file may be" % (
                size // 2 ** 20, MAX_FILE_BYTES // 2 ** 20))
        from flake8_dlworker.notebook import is_notebook

        if is_notebook(path):
            return _notebook(path)
        return _module(path, options)
    except _Skip as exc:
        return _failed(path, str(exc))
    except OSError as exc:
        return _failed(path, "cannot read: %s" % (exc.strerror or exc))
    except (RecursionError, MemoryError) as exc:
        return _failed(path, "too deeply nested or too large to analyse (%s)"
                       % type(exc).__name__)
    except Exception as exc:  # the checker's own failure on this file
        if os.environ.get("DLW_DOCTOR_DEBUG"):
            raise
        return _failed(path, "the checker failed on it: %s: %s" % (type(exc).__name__, exc))


class _Skip(Exception):
    pass


def _failed(path, reason, line=None, syntax=False):
    return Checked(path, [], [Problem(path, reason, line, syntax=syntax)])


def _regular_size(path):
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise _Skip("is not a regular file")
    return info.st_size


def _module(path, options):
    from flake8.processor import FileProcessor

    from flake8_dlworker.plugin import DataLoaderWorkerChecker
    from flake8_dlworker.prefilter import may_report

    processor = None
    text = plain_text(path)  # the same text, read without flake8's line by line reading
    if text is None or _FLAKE8.search(text):
        processor = FileProcessor(path, options)
        text = "".join(processor.lines)
        if _FLAKE8.search(text) and processor.should_ignore_file():  # "# flake8: noqa"
            return Checked(path, [], [])
    if not may_report(text, path) and parses(text):
        return Checked(path, [], [])  # valid Python in which the plugin finds nothing
    if processor is None:
        processor = FileProcessor(path, options)
    paused = gc.isenabled()
    gc.disable()  # each pass would walk the tree being built: nothing in it is a cycle
    try:
        tree = processor.build_ast()
    except SyntaxError as exc:
        return _failed(path, "not valid Python: %s" % exc.msg, exc.lineno, True)
    except ValueError as exc:
        return _failed(path, "not valid Python: %s" % exc, None, True)
    finally:
        if paused:
            gc.enable()
    checker = DataLoaderWorkerChecker(tree, path, processor.lines)
    found = [Raw(message.split(" ", 1)[0], line, col, message.split(" ", 1)[1],
                 noqa_line(processor, text, line))
             for line, col, message, _kind in checker.run()]
    return Checked(path, found, [])


def plain_text(path):
    """The text flake8's file processor reads from ``path`` (its lines joined), when the
    file is plain UTF-8: no byte order mark, no ``coding`` in its first two lines (where
    a coding line would be) and valid UTF-8 throughout; else None, and flake8's own
    reading is needed (a coding line, a BOM to strip, the latin-1 fallback).

    flake8 opens the file as ``tokenize.open`` does: UTF-8 when no coding line says
    otherwise, newlines universal (``\\r\\n`` and ``\\r`` read as ``\\n``)."""
    with open(path, "rb") as handle:
        data = handle.read()
    if data.startswith(codecs.BOM_UTF8) or b"coding" in b"\n".join(data.split(b"\n", 2)[:2]):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.startswith("\xef\xbb\xbf"):  # flake8 strips these three characters too
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def parses(text):
    """True when ``ast.parse(text)`` certainly succeeds, found without building the
    tree (which costs more than half of what the whole check costs).

    ``symtable`` runs the same parser and then walks the C tree without making a Python
    object of each node: a syntax error stops both alike. ``ast.parse`` also fails on a
    tree too deep to make objects of (RecursionError), where each node counts, and
    ``symtable`` counts only statements and expressions (a run of at most three other
    nodes lies between two of them, match patterns aside, which brackets bound); so
    ``symtable`` is given a fifth of the depth ``ast.parse`` has, and a file it does not
    take is parsed as flake8 parses it. Python 3.12 counts the depth in C, where it
    cannot be lowered: there, and on other Pythons, this is always False."""
    if sys.implementation.name != "cpython" or sys.version_info >= (3, 12):
        return False
    import symtable

    limit = sys.getrecursionlimit()
    depth = _depth()
    try:
        sys.setrecursionlimit(depth + max(32, (limit - depth) // 5))
        symtable.symtable(text, "<check>", "exec")
    except Exception:  # SyntaxError, RecursionError, ValueError (a NUL byte)...
        return False
    finally:
        sys.setrecursionlimit(limit)
    return True


def _depth():
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def noqa_line(processor, text, line):
    """The text flake8 searches for ``# noqa`` on ``line``. flake8 tokenizes the whole
    file to find it (a string over several lines is one logical line); in a file where
    no ``noqa`` is written, the line itself gives flake8's answer without that."""
    if _NOQA.search(text):
        return processor.noqa_line_for(line)
    return processor.lines[line - 1] if 0 < line <= len(processor.lines) else ""


def _notebook(path):
    """A notebook's code cells, as :mod:`flake8_dlworker.notebook` makes one module of
    them; each cell that is not Python is a problem, and the other cells are checked."""
    from doctor.static import NotebookSyntaxError, parse_notebook
    from flake8_dlworker.analysis.project import reaches_sibling_workers
    from flake8_dlworker.plugin import DataLoaderWorkerChecker, findings, might_start_workers

    with open(path, "rb") as handle:
        data = handle.read()
    try:
        book, tree = parse_notebook(path, data)
    except NotebookSyntaxError as exc:  # each cell parses, but they do not fit together
        return Checked(path, [], [Problem(path, exc.reason, exc.line, exc.cell, True)])
    except ValueError as exc:
        raise _Skip(exc.reason)
    problems = [Problem(path, why, line, cell, True) for cell, line, why in book.skipped]
    if not (might_start_workers(book.source) or reaches_sibling_workers(tree, path)):
        return Checked(path, [], problems)
    lines = book.source.splitlines(True)
    found = []
    for f in findings(tree, path, DataLoaderWorkerChecker.start_method,
                      DataLoaderWorkerChecker.host, notebook=True):
        cell, line = book.locate(f.line)
        found.append(Raw(f.code, f.line, f.col, f.text, lines[f.line - 1], cell, line))
    return Checked(path, found, problems)


def _init_worker(argv):
    load(argv)


def _check_one(path):
    return check_file(path, _STATE["options"])


def check_all(files, argv, options):
    """[Checked] for ``files``, in their order, on ``--jobs`` processes (flake8's
    setting: every core unless configured)."""
    from flake8_dlworker.prefilter import forget

    forget()  # the folders as they are now (a fix may have added a module)
    jobs = options.jobs.n_jobs if not options.jobs.is_auto else (os.cpu_count() or 1)
    if jobs < 2 or len(files) < PARALLEL_FROM:
        return [check_file(path, options) for path in files]
    from concurrent.futures import ProcessPoolExecutor

    order = sorted(range(len(files)), key=lambda i: -_size_or_zero(files[i]))
    results = [None] * len(files)
    with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker,
                             initargs=(argv,)) as pool:
        # the largest files first, in small chunks: no process is left with a long
        # file at the end while the others wait
        for i, checked in zip(order, pool.map(_check_one, [files[i] for i in order],
                                              chunksize=CHUNK)):
            results[i] = checked
    return results


def _size_or_zero(path):
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def run(paths, argv, exclude=None, extend_exclude=()):
    """:class:`Report` for ``check PATH...`` with flake8's configuration ``argv``."""
    options = load(argv)
    files, problems = discover(paths, options, exclude, extend_exclude)
    decide = guide(options)
    findings = []
    for checked in check_all(files, argv, options):
        problems.extend(checked.problems)
        for raw in checked.found:
            if reported(decide, checked.path, raw):
                findings.append(_finding(checked.path, raw))
    findings.sort(key=lambda f: (f["path"], f.get("cell") or 0, f["line"], f["col"]))
    return Report(findings, problems, options)


def _finding(path, raw):
    """The evidence record of a reported finding (``col`` counted from 1, in bytes, as
    flake8 prints it)."""
    found = {"path": os.path.normpath(path), "line": raw.line, "col": raw.col + 1,
             "code": raw.code, "text": raw.text}
    if raw.cell is not None:
        found.update(cell=raw.cell, line=raw.cell_line)
    return found


def say(problems, out=None):
    """One warning line per problem, on stderr."""
    out = out or sys.stderr
    for problem in problems:
        print(inert_line(problem.warning()), file=out)


def keeper(options):
    """``keep(path, text, finding)``: True when flake8 would report the plugin's
    ``finding`` in ``path`` holding ``text`` (the fixers' filter: a file's lines move as
    it is fixed, its ``# noqa`` comments with them)."""
    from flake8.processor import FileProcessor

    decide = guide(options)

    def keep(path, text, finding):
        processor = FileProcessor(path, options, lines=text.splitlines(True))
        return reported(decide, path, Raw(finding.code, finding.line, finding.col,
                                          finding.text, noqa_line(processor, text, finding.line)))
    return keep
