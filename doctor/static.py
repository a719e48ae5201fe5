"""The checker's findings on a file, as the evidence record carries them."""
import ast

from flake8_dlworker.plugin import findings


def static_findings(path, start_method="spawn", source=None):
    """[{path, line, col, code, text}] for one Python file; [] when it cannot be read.

    ``source``: the file's bytes, already read (and vetted) by the caller."""
    try:
        if source is None:
            with open(path, "rb") as handle:
                source = handle.read()
        tree = ast.parse(source, path)
    except (OSError, SyntaxError, ValueError):
        return []
    return [{"path": path, "line": f.line, "col": f.col + 1, "code": f.code, "text": f.text}
            for f in findings(tree, path, start_method)]
