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
