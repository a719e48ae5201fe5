"""Real `flake8 --select DLW` on every fixture prints exactly the marked findings."""
import re
import subprocess
import sys

import pytest

from fixture_markers import FIXTURES, expected_findings, fixture_files

LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>DLW\d{3}) ")


@pytest.fixture(scope="module")
def flake8_output():
    """One flake8 run over the whole folder, as a user would run it."""
    cmd = [sys.executable, "-m", "flake8", "--isolated", "--select", "DLW", str(FIXTURES)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    assert out.stderr == ""
    found = {}
    for line in out.stdout.splitlines():
        match = LINE.match(line)
        assert match, "unexpected flake8 line: %r" % line
        found.setdefault(match["path"], set()).add(
            (int(match["line"]), int(match["col"]), match["code"]))
    return found


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_fixture_findings_match_markers(path, flake8_output):
    assert flake8_output.get(str(path), set()) == expected_findings(path)


def test_every_rule_has_crashing_and_clean_fixtures():
    codes = {code for p in fixture_files() for _, _, code in expected_findings(p)}
    assert codes == {"DLW101", "DLW102", "DLW103", "DLW104"}
    assert any(p.name.startswith("clean_") for p in fixture_files())
