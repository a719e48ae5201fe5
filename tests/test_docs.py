"""The catalog is complete, and the committed docs are what the catalog generates."""
import ast
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_dlworker.catalog import RULES

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT.parent / "shared" / "SPEC.md"
GEN_PATH = ROOT / "scripts" / "gen_docs.py"
GEN = runpy.run_path(str(GEN_PATH))
SECTIONS = ("title", "message", "fix_title", "explanation", "what_it_does", "why_bad",
            "example", "use_instead", "fix_safety", "options")
MARKDOWN = ("what_it_does", "why_bad", "fix_safety", "options")
#: the checker formats these templates; they are part of the output contract
FIXED_MESSAGES = {
    "DLW101": ('unguarded module-level code starts worker processes ({chain}); '
               'move it under if __name__ == "__main__":'),
    "DLW102": "lambda passed as {role} is not picklable under {method}; "
              "define a module-level function",
    "DLW103": "{kind} '{name}' defined inside {scope}() reaches a worker as {role} and is "
              "not picklable under {method}; define it at module level",
    "DLW104": "{kind} '{name}' defined {where} reaches a worker as {role}; spawned workers "
              "cannot import it, {fix}",
}
STALE = "run `make docs`"


def test_codes_in_order():
    """Code order, static causes (1xx) first, each range numbered from 01 with no gap."""
    codes = list(RULES)
    assert codes == sorted(codes)
    for hundred in ("DLW1", "DLW2"):
        numbers = [int(code[4:]) for code in codes if code.startswith(hundred)]
        assert numbers == list(range(1, len(numbers) + 1)), hundred


@pytest.mark.skipif(not SPEC.exists(), reason="SPEC.md lies outside this checkout")
def test_every_spec_code_has_a_record():
    spec_codes = set(re.findall(r"^\| (DLW\d{3}) \|", SPEC.read_text(), re.M))
    assert spec_codes and spec_codes <= set(RULES)  # new causes get new codes (SPEC)


@pytest.mark.parametrize("code", list(RULES))
def test_record_is_complete(code):
    rule = RULES[code]
    assert rule.code == code
    for field in SECTIONS:
        assert getattr(rule, field).strip(), "%s has an empty %s" % (code, field)
    assert rule.references and all(ref.strip() for ref in rule.references)
    # a DLW1xx cause is static; a DLW2xx one may be too (a rule of its own, or a shared one)
    assert rule.static == (code.startswith("DLW1") or rule.has("rule")
                           or rule.field("shared_rule") is not None)
    assert rule.default_off == (code in ("DLW105", "DLW110"))
    assert re.search(r"`[^`]*(Error|error|Warning|warn|\d{4,})[^`]*`", rule.why_bad), \
        "%s: why_bad must quote the runtime text" % code
    assert rule.valid and rule.invalid
    assert rule.example == rule.invalid[0] and rule.use_instead == rule.valid[0]


@pytest.mark.parametrize("code", list(RULES))
def test_message_is_one_line_cause_then_fix(code):
    rule = RULES[code]
    assert "\n" not in rule.message and "\n" not in rule.title
    assert rule.message.count("; ") == 1, rule.message
    assert rule.title == rule.title.strip() and not rule.title.endswith(".")
    assert 2 <= rule.explanation.count(". ") + 1 <= 5, rule.explanation


@pytest.mark.parametrize("code", sorted(FIXED_MESSAGES))
def test_fixed_messages(code):
    assert RULES[code].message == FIXED_MESSAGES[code]


@pytest.mark.parametrize("code", list(RULES))
def test_markdown_sections_are_not_indented(code):
    """Text indented by 4+ spaces outside a fence would render as a code block."""
    rule = RULES[code]
    for field in MARKDOWN:
        fenced = False
        for line in getattr(rule, field).splitlines():
            if line.startswith("```"):
                fenced = not fenced
            elif not fenced:
                assert not line.startswith("    "), "%s.%s: %r" % (code, field, line)
        assert not fenced, "%s.%s: unclosed code fence" % (code, field)


@pytest.mark.parametrize("code", list(RULES))
def test_examples_compile(code):
    rule = RULES[code]
    for kind in ("valid", "invalid"):
        for i, source in enumerate(getattr(rule, kind)):
            name = "%s %s[%d]" % (code, kind, i)
            compile(source, name, "exec")
            ast.parse(source, name, feature_version=(3, 9))


@pytest.mark.parametrize("code", ["DLW101", "DLW102", "DLW103", "DLW104"])
def test_pickling_rules_have_four_examples_each_way(code):
    assert len(RULES[code].invalid) >= 4 and len(RULES[code].valid) >= 4


def test_rules_md_is_generated():
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == GEN["render_rules_md"](), "docs/rules.md is stale: " + STALE


def test_readme_table_is_generated():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count(GEN["START"]) == 1 and readme.count(GEN["END"]) == 1
    table = readme.split(GEN["START"], 1)[1].split(GEN["END"], 1)[0]
    assert table == "\n" + GEN["render_readme_table"](), "README.md is stale: " + STALE


def test_rules_md_has_every_section_in_order():
    text = GEN["render_rules_md"]()
    order = ["## %s: %s" % (rule.code, rule.title) for rule in RULES.values()]
    positions = [text.index(h) for h in order]
    assert positions == sorted(positions)
    headings = ["### What it does", "### Why is this bad?", "### Example", "### Use instead",
                "### Fix safety", "### Options", "### References"]
    for rule, start in zip(RULES.values(), positions):
        section = text[start:]
        section = section[:section.find("\n## ", 1)] if "\n## " in section[1:] else section
        found = [section.index(h) for h in headings]
        assert found == sorted(found), rule.code
        assert section.count("```python") == 2, rule.code


def _run_check(root):
    return subprocess.run([sys.executable, str(root / "scripts" / "gen_docs.py"), "--check"],
                          cwd=root, capture_output=True, text=True)


def test_check_passes_on_the_committed_files():
    result = _run_check(ROOT)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("stale", ["docs/rules.md", "README.md"])
def test_check_names_the_stale_file(tmp_path, stale):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "docs").mkdir()
    shutil.copy(GEN_PATH, tmp_path / "scripts" / "gen_docs.py")
    shutil.copytree(ROOT / "flake8_dlworker", tmp_path / "flake8_dlworker",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for rel in ("docs/rules.md", "README.md"):
        shutil.copy(ROOT / rel, tmp_path / rel)
    assert _run_check(tmp_path).returncode == 0
    target = tmp_path / stale
    text = target.read_text(encoding="utf-8")
    if stale == "README.md":
        text = text.replace(GEN["START"] + "\n", GEN["START"] + "\n| stale row |\n", 1)
    else:
        text += "\nhand edit\n"
    target.write_text(text, encoding="utf-8")
    result = _run_check(tmp_path)
    assert result.returncode == 1
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert len(lines) == 1 and stale in lines[0] and "make docs" in lines[0]
