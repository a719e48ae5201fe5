"""The checker never raises on generated valid Python (hypothesmith).

The suite runs a few dozen programs per test; `DLW_FUZZ=10 pytest
tests/test_generated_code.py` runs ten times as many.
"""
import ast
import os

import hypothesmith
from hypothesis import HealthCheck, given, settings

from flake8_dlworker.plugin import findings

ROUNDS = int(os.environ.get("DLW_FUZZ", "1"))


@settings(max_examples=40 * ROUNDS, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(source=hypothesmith.from_grammar())
def test_never_raises_on_valid_code(source):
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return  # the grammar admits a few things the compiler rejects
    findings(tree, "generated.py")
    findings(tree, "__main__.py")


@settings(max_examples=25 * ROUNDS, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(source=hypothesmith.from_node())
def test_never_raises_on_generated_modules(source):
    tree = ast.parse(source)
    findings(tree, "generated.py")
