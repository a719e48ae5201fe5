"""The checker's findings on a file, as the evidence record carries them."""
import ast

from flake8_dlworker.analysis.project import reaches_sibling_workers
from flake8_dlworker.plugin import findings, might_start_workers


def static_findings(path, start_method="spawn", source=None):
    """[{path, line, col, code, text}] for one Python file; [] when it cannot be read.

    ``source``: the file's bytes, already read (and vetted) by the caller."""
    return file_findings(path, start_method, source=source)[0]


def file_findings(path, start_method="spawn", prefilter=False, source=None):
    """(findings, problem): ``problem`` is a one-line reason the file was not checked.

    ``prefilter`` skips, as flake8 does, a module that mentions nothing that starts
    workers and calls no sibling module at its top level (files found in a directory).
    ``source``: the file's bytes, already read (and vetted) by the caller.
    """
    try:
        if source is None:
            with open(path, "rb") as handle:
                source = handle.read()
        tree = ast.parse(source, path)
    except OSError as exc:
        return [], "%s: cannot read: %s" % (path, exc.strerror or exc)
    except SyntaxError as exc:
        return [], "%s:%s: not valid Python: %s" % (path, exc.lineno, exc.msg)
    except ValueError as exc:
        return [], "%s: not a Python file: %s" % (path, exc)
    text = source.decode("utf-8", "replace")
    if prefilter and not (might_start_workers(text) or reaches_sibling_workers(tree, path)):
        return [], None
    return [{"path": path, "line": f.line, "col": f.col + 1, "code": f.code, "text": f.text}
            for f in findings(tree, path, start_method)], None
