"""Each rule's own VALID and INVALID examples from the catalog, run in-process."""
import ast

import pytest

from flake8_dlworker.catalog import RULES
from flake8_dlworker.plugin import IMPLEMENTED, findings


def _cases(kind):
    for code in sorted(IMPLEMENTED):
        for i, source in enumerate(getattr(RULES[code], kind)):
            yield pytest.param(code, source, id="%s-%s-%d" % (code, kind, i))


def _codes(source, filename="example.py", start_method="spawn"):
    return [f.code for f in findings(ast.parse(source), filename, start_method)]


@pytest.mark.parametrize("code, source", list(_cases("invalid")))
def test_invalid_example_reports(code, source):
    assert code in _codes(source)


@pytest.mark.parametrize("code, source", list(_cases("valid")))
def test_valid_example_is_silent(code, source):
    assert code not in _codes(source)


@pytest.mark.parametrize("code, source", list(_cases("invalid")))
def test_fork_silences_spawn_rules(code, source):
    assert _codes(source, start_method="fork") == []


def test_every_implemented_rule_has_examples():
    for code in IMPLEMENTED:
        assert len(RULES[code].invalid) >= 4 and len(RULES[code].valid) >= 4, code
