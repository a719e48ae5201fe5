"""The fixtures and the findings their `# DLW1xx: COL` markers promise."""
import re
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
#: reproducers of runtime-only causes (DLW2xx) for the doctor; flake8 has nothing to say
RUNTIME = FIXTURES / "runtime"
MARKER = re.compile(r"#\s*(DLW\d{3}):\s*(\d+)")


def fixture_files():
    return sorted(p for p in FIXTURES.rglob("*.py")
                  if p.name != "__init__.py" and RUNTIME not in p.parents)


def expected_findings(path):
    """{(line, col, code)} from the markers in one fixture."""
    found = set()
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        for code, col in MARKER.findall(line):
            found.add((lineno, int(col), code))
    return found


def modules_beside(path):
    """The modules of the fixture's own folder that it imports (``tiny_hf.py``,
    ``loaders_beside.py``): a copy of the fixture needs them beside it."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        for name in names:
            beside = path.with_name(name.split(".")[0] + ".py")
            if beside.is_file() and beside != path and beside not in found:
                found.append(beside)
    return found
