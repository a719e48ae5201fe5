"""Where each cause lives: CONTRIBUTING.md's map must match the tree.

    python tests/test_cause_map.py    print the map as the tree has it

For every catalog code: its folder in ``flake8_dlworker/causes/`` with how many INVALID
and VALID examples it holds (documented + named) and how many INVALID ones carry an
expected fix; its own code there (``rule.py``, ``diagnosis.py`` and its rules,
``patch.py``) or the rules of several causes that handle it (its record's
``shared_rule``, ``pickle_order``, ``generic``, or a function of ``doctor/diagnose.py``
that names it); and how many programs of ``fixtures/`` (no single cause's example) and
saved logs carry its code in their names. The layout itself is checked too: what each
of a cause's modules must define, and that the lint side imports none of the runtime.
"""
import ast
import importlib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flake8_dlworker import catalog  # noqa: E402
from flake8_dlworker.catalog import RULES  # noqa: E402

CONTRIBUTING = ROOT / "CONTRIBUTING.md"
START, END = "<!-- causes:start -->", "<!-- causes:end -->"


def _mentions(path, code):
    """The top-level functions of ``path`` whose code names ``code``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef)
            and any(isinstance(n, ast.Constant) and n.value == code for n in ast.walk(node))]


def _rules_of(path):
    """The rules of a cause's ``diagnosis.py``, in order: its functions marked
    ``@rule(order=N)`` and the names bound to ``by_signature(CODE, order=N)``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        for decorator in getattr(node, "decorator_list", ()):
            if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", "") == "rule":
                found.append((decorator.keywords[0].value.value, node.name))
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                getattr(node.value.func, "id", "") == "by_signature":
            order = [kw.value.value for kw in node.value.keywords if kw.arg == "order"]
            found.append((order[0], node.targets[0].id))
    return [name for _, name in sorted(found)]


def _count(rule, kind):
    """``documented + named`` examples of one kind."""
    documented = len(rule.example_paths(kind, documented=True))
    return "%d + %d" % (documented, len(rule.example_paths(kind)) - documented)


def cause_map():
    """{code: (examples, static rule, runtime rules, maker, fixtures, logs)}."""
    diagnose = ROOT / "doctor" / "diagnose.py"
    found = {}
    for code, rule in RULES.items():
        low = code.lower()
        folder = Path(rule.folder)
        static = ["rule.py"] if rule.has("rule") else []
        if rule.field("shared_rule"):
            static.append("rules/%s.py" % rule.field("shared_rule"))
        runtime = []
        if rule.has("diagnosis"):
            runtime.extend("diagnosis.py `%s`" % f for f in _rules_of(folder / "diagnosis.py"))
        if rule.field("pickle_order"):
            runtime.append("diagnose.py `pickling`")
        if rule.field("generic"):
            runtime.append("diagnose.py `generic`")
        runtime.extend("diagnose.py `%s`" % f for f in _mentions(diagnose, code))
        fixtures = sorted({p.relative_to(ROOT / "fixtures").as_posix()
                           for p in (ROOT / "fixtures").rglob("%s_*" % low)
                           if p.suffix in (".py", "") and "__pycache__" not in p.parts})
        logs = len(list((ROOT / "tests" / "logs").glob("%s__*.log" % low)))
        invalid = rule.example_paths("invalid")
        fixes = sum(Path(p).with_name(Path(p).stem + ".fix.diff").exists() for p in invalid)
        examples = "%s/: %s invalid (%d with a fix), %s valid" % (
            code, _count(rule, "invalid"), fixes, _count(rule, "valid"))
        found[code] = (examples, static, runtime, rule.has("patch"), len(fixtures), logs)
    return found


def render():
    rows = ["| code | record and examples (`flake8_dlworker/causes/`) "
            "| static rule (in its folder, or `flake8_dlworker/rules/`) "
            "| runtime rules (in its folder, or `doctor/`) "
            "| patch maker | other fixtures | logs |",
            "|---|---|---|---|---|---|---|"]
    for code, (examples, static, runtime, maker, fixtures, logs) in cause_map().items():
        rows.append("| %s | %s | %s | %s | %s | %d | %d |" % (
            code, examples, ", ".join(static) or "-", ", ".join(runtime) or "-",
            "patch.py" if maker else "-", fixtures, logs))
    return "\n".join(rows) + "\n"


def test_contributing_holds_the_map_of_every_cause():
    text = CONTRIBUTING.read_text(encoding="utf-8")
    start, end = text.index(START) + len(START), text.index(END)
    assert text[start:end].strip() == render().strip(), \
        "CONTRIBUTING.md's map is stale: replace it with `python tests/test_cause_map.py`"


def test_something_detects_every_cause():
    for code, (_examples, static, runtime, _maker, _fixtures, _logs) in cause_map().items():
        assert runtime, code
        assert bool(static) == RULES[code].static, code


def test_each_part_of_a_cause_follows_the_convention():
    """rule.py: ``findings(scan)``; diagnosis.py: at least one ``@rule(order=N)``;
    patch.py: ``STATIC`` and ``fix``. The orders of all the rules differ."""
    from doctor.diagnose import rules

    for code in catalog.having("rule"):
        assert callable(importlib.import_module(catalog.module(code, "rule")).findings), code
    for code in catalog.having("diagnosis"):
        assert _rules_of(Path(RULES[code].folder) / "diagnosis.py"), code
    for code in catalog.having("patch"):
        maker = importlib.import_module(catalog.module(code, "patch"))
        assert isinstance(maker.STATIC, bool) and callable(maker.fix), code
    orders = [f.order for f in rules()]
    assert orders == sorted(set(orders))


def test_the_lint_side_imports_nothing_of_the_runtime():
    """The flake8 plugin and every static rule load without the doctor and without torch."""
    probe = ("import sys\n"
             "from flake8_dlworker import plugin\n"
             "plugin.rule_modules()\n"
             "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('doctor', 'torch')\n"
             "             or m.endswith(('.diagnosis', '.patch')))\n"
             "print(bad)\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=str(ROOT), capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[]", out


if __name__ == "__main__":
    sys.stdout.write(render())
