"""The checker never raises on generated valid Python (hypothesmith)."""
import ast

import hypothesmith
from hypothesis import HealthCheck, given, settings

from flake8_dlworker.plugin import findings


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(source=hypothesmith.from_grammar())
def test_never_raises_on_valid_code(source):
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return  # the grammar admits a few things the compiler rejects
    findings(tree, "generated.py")
    findings(tree, "__main__.py")


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(source=hypothesmith.from_node())
def test_never_raises_on_generated_modules(source):
    tree = ast.parse(source)
    findings(tree, "generated.py")
