"""Real `flake8 --select DLW` on every named example and fixture prints exactly the
marked findings."""
import re
import subprocess
import sys

import pytest

from fixture_markers import expected_findings, fixture_files, short
from flake8_dlworker.catalog import RULES

LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>DLW\d{3}) ")


#: the host-dependent rules, selected by their own codes, with limits that hold on any
#: host: every pin_memory=True and every literal num_workers above 2 is reported
HOST_OPTIONS = ("--extend-select", "DLW105,DLW110", "--dlw-min-ram-gb", "100000",
                "--dlw-max-workers", "2")
HOST_CODES = {code for code, rule in RULES.items() if rule.default_off}


def _run(*options):
    cmd = [sys.executable, "-m", "flake8", "--isolated", "--select", "DLW", *options,
           *map(str, fixture_files())]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    assert out.stderr == ""
    found = {}
    for line in out.stdout.splitlines():
        match = LINE.match(line)
        assert match, "unexpected flake8 line: %r" % line
        found.setdefault(match["path"], set()).add(
            (int(match["line"]), int(match["col"]), match["code"]))
    return found, out.stdout


@pytest.fixture(scope="module")
def flake8_output():
    """One flake8 run over every file, as a user would run it."""
    return _run(*HOST_OPTIONS)[0]


@pytest.mark.parametrize("path", fixture_files(), ids=short)
def test_fixture_findings_match_markers(path, flake8_output):
    assert flake8_output.get(str(path), set()) == expected_findings(path)


def test_every_rule_has_crashing_and_clean_fixtures():
    codes = {code for p in fixture_files() for _, _, code in expected_findings(p)}
    assert codes == {code for code, rule in RULES.items() if rule.static}
    assert any(p.name.startswith("clean_") for p in fixture_files())


def test_host_rules_show_only_when_their_code_is_selected(flake8_output):
    """'--select DLW' with the same limits: everything but DLW105 and DLW110."""
    found, _ = _run("--dlw-min-ram-gb", "100000", "--dlw-max-workers", "2")
    expected = {path: {f for f in marks if f[2] not in HOST_CODES}
                for path, marks in flake8_output.items()}
    assert found == {path: marks for path, marks in expected.items() if marks}


def test_host_rule_messages_name_the_host_figures():
    from flake8_dlworker.host import ram_gb, usable_cpus

    _, stdout = _run(*HOST_OPTIONS)
    lines = [line for line in stdout.splitlines() if " DLW105 " in line or " DLW110 " in line]
    assert lines
    for line in lines:
        if " DLW105 " in line:
            assert "with %.1f GB of RAM (below 100000 GB)" % ram_gb() in line
        else:
            assert "limit of 2 workers (this host can use %d CPUs)" % usable_cpus() in line
