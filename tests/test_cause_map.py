"""Where each cause lives: CONTRIBUTING.md's map must match the tree.

    python tests/test_cause_map.py    print the map as the tree has it

For every catalog code: its folder in ``flake8_dlworker/causes/`` with how many INVALID
and VALID examples it holds (documented + named) and how many INVALID ones carry an
expected fix, the rule module(s) of the static checker that emit it, the functions of
``doctor/diagnose.py`` that name it, its patch maker, and how many programs of
``fixtures/`` (no single cause's example) and saved logs carry its code in their names.
"""
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flake8_dlworker.catalog import RULES  # noqa: E402

CONTRIBUTING = ROOT / "CONTRIBUTING.md"
START, END = "<!-- causes:start -->", "<!-- causes:end -->"


def _mentions(path, code):
    """The top-level functions, classes and assigned names (a ``CODE`` constant, a
    table) of ``path`` whose code names ``code``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        if not any(isinstance(n, ast.Constant) and n.value == code for n in ast.walk(node)):
            continue
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.extend(t.id for t in targets if isinstance(t, ast.Name))
    return found


def _count(rule, kind):
    """``documented + named`` examples of one kind."""
    documented = len(rule.example_paths(kind, documented=True))
    return "%d + %d" % (documented, len(rule.example_paths(kind)) - documented)


def cause_map():
    """{code: (examples, static rule files, diagnose functions, maker, fixtures, logs)}."""
    rules = sorted((ROOT / "flake8_dlworker" / "rules").glob("*.py"))
    diagnose = ROOT / "doctor" / "diagnose.py"
    found = {}
    for code in RULES:
        low = code.lower()
        static = ["rules/%s" % p.name for p in rules if _mentions(p, code)]
        runtime = _mentions(diagnose, code)
        fixtures = sorted({p.relative_to(ROOT / "fixtures").as_posix()
                           for p in (ROOT / "fixtures").rglob("%s_*" % low)
                           if p.suffix in (".py", "") and "__pycache__" not in p.parts})
        logs = len(list((ROOT / "tests" / "logs").glob("%s__*.log" % low)))
        rule = RULES[code]
        invalid = rule.example_paths("invalid")
        fixes = sum(Path(p).with_name(Path(p).stem + ".fix.diff").exists() for p in invalid)
        examples = "%s/: %s invalid (%d with a fix), %s valid" % (
            code, _count(rule, "invalid"), fixes, _count(rule, "valid"))
        found[code] = (examples, static, runtime, rule.has("patch"), len(fixtures), logs)
    return found


def render():
    rows = ["| code | record and examples (`flake8_dlworker/causes/`) "
            "| static rule (`flake8_dlworker/`) | runtime (`doctor/diagnose.py`) "
            "| patch maker (`doctor/patches/`) | other fixtures | logs |",
            "|---|---|---|---|---|---|---|"]
    for code, (examples, static, runtime, maker, fixtures, logs) in cause_map().items():
        rows.append("| %s | %s | %s | %s | %s | %d | %d |" % (
            code, examples, ", ".join(static) or "-", ", ".join("`%s`" % f for f in runtime) or "-",
            "%s.py" % code.lower() if maker else "-", fixtures, logs))
    return "\n".join(rows) + "\n"


def test_contributing_holds_the_map_of_every_cause():
    text = CONTRIBUTING.read_text(encoding="utf-8")
    start, end = text.index(START) + len(START), text.index(END)
    assert text[start:end].strip() == render().strip(), \
        "CONTRIBUTING.md's map is stale: replace it with `python tests/test_cause_map.py`"


def test_something_detects_every_cause():
    for code, (_examples, static, runtime, _maker, _fixtures, _logs) in cause_map().items():
        assert static or runtime, code


if __name__ == "__main__":
    sys.stdout.write(render())
