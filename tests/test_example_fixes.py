"""Each catalog INVALID example's expected fix: ``invalid/NN.fix.diff`` beside it.

The fix is what ``python -m doctor check --fix`` writes for the example: every static
finding of a cause that has a static patch maker, composed on one tree. An example
with a ``.fix.diff`` must get exactly that diff, and the fixed source must no longer
report the fixed causes; an example without one must get no fix at all.

    python tests/test_example_fixes.py    rewrite every .fix.diff from the makers
"""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from doctor.patches import maker, unified_diff  # noqa: E402
from doctor.patches.combine import Request, fix_file  # noqa: E402
from doctor.static import static_findings  # noqa: E402
from flake8_dlworker import catalog  # noqa: E402
from flake8_dlworker.catalog import RULES  # noqa: E402

#: the codes whose cause folder holds a patch maker
CODES = catalog.having("patch")


def _examples():
    for code, rule in RULES.items():
        if rule.static:
            for path in rule.example_paths("invalid"):
                yield Path(path)


def expected_path(example):
    return example.with_name(example.stem + ".fix.diff")


def fix(example):
    """(the diff of the composed static fix, the codes asked, the fixed source), or
    ("", set(), None) when there is no fix."""
    codes = {f["code"] for f in static_findings(str(example))}
    asked = [Request(code, str(example)) for code in CODES
             if code in codes and maker(code).STATIC]
    if not asked:
        return "", set(), None
    before = example.read_text(encoding="utf-8")
    fixed = fix_file(str(example), before, asked)
    if not fixed.changed:
        return "", set(), None
    name = example.relative_to(ROOT).as_posix()
    return unified_diff(name, before, fixed.after), {r.code for r in asked}, fixed.after


EXAMPLES = list(_examples())


def _id(path):
    return "/".join(path.parts[-3:])


@pytest.mark.parametrize("example", EXAMPLES, ids=_id)
def test_invalid_example_gets_its_expected_fix(example, tmp_path):
    result = fix(example)
    expected = expected_path(example)
    if not expected.exists():
        assert result[0] == "", "%s gets a fix; write it with `python %s`" % (
            _id(example), Path(__file__).relative_to(ROOT))
        return
    diff, asked, after = result
    assert diff == expected.read_text(encoding="utf-8")
    fixed = tmp_path / example.name
    fixed.write_text(after, encoding="utf-8")
    left = {f["code"] for f in static_findings(str(fixed))} & asked
    assert not left, "the fixed %s still reports %s" % (_id(example), sorted(left))


def test_some_examples_of_every_fixable_static_cause_have_a_fix():
    with_fix = {Path(p).parts[-3] for p in EXAMPLES if expected_path(p).exists()}
    fixable = {code for code in CODES if maker(code).STATIC and RULES[code].static}
    assert fixable <= with_fix, sorted(fixable - with_fix)


if __name__ == "__main__":
    for example in EXAMPLES:
        diff = fix(example)[0]
        target = expected_path(example)
        if diff:
            target.write_text(diff, encoding="utf-8")
        elif target.exists():
            target.unlink()
    print("wrote %d fixes" % sum(expected_path(p).exists() for p in EXAMPLES))
