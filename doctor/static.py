"""The checker's findings on a file, as the evidence record carries them."""
import ast

from flake8_dlworker.plugin import findings


def static_findings(path, start_method="spawn"):
    """[{path, line, col, code, text}] for one Python file; [] when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read(), path)
    except (OSError, SyntaxError, ValueError):
        return []
    return [{"path": path, "line": f.line, "col": f.col + 1, "code": f.code, "text": f.text}
            for f in findings(tree, path, start_method)]
