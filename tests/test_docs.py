"""The catalog is complete, and the committed docs are what the catalog generates."""
import re
import runpy
from pathlib import Path

import pytest

from flake8_dlworker.catalog import RULES

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT.parent / "shared" / "SPEC.md"
GEN = runpy.run_path(str(ROOT / "scripts" / "gen_docs.py"))
SECTIONS = ("title", "message", "fix_title", "explanation", "what_it_does", "why_bad",
            "example", "use_instead", "fix_safety", "options")


def test_codes_in_order():
    codes = list(RULES)
    assert codes == ["DLW1%02d" % i for i in range(1, 12)] + ["DLW2%02d" % i for i in range(1, 8)]


@pytest.mark.skipif(not SPEC.exists(), reason="SPEC.md lies outside this checkout")
def test_every_spec_code_has_a_record():
    spec_codes = set(re.findall(r"^\| (DLW\d{3}) \|", SPEC.read_text(), re.M))
    assert spec_codes and spec_codes == set(RULES)


@pytest.mark.parametrize("code", list(RULES))
def test_record_is_complete(code):
    rule = RULES[code]
    for field in SECTIONS:
        assert getattr(rule, field).strip(), "%s has an empty %s" % (code, field)
    assert rule.references
    assert rule.static == code.startswith("DLW1")
    assert rule.default_off == (code in ("DLW105", "DLW110"))
    assert re.search(r"`[^`]*(Error|error|Warning|warn|\d{4,})[^`]*`", rule.why_bad), \
        "%s: why_bad must quote the runtime text" % code
    assert rule.valid and rule.invalid
    for source in rule.valid + rule.invalid:
        compile(source, "%s example" % code, "exec")


def test_rules_md_is_generated():
    committed = (ROOT / "docs" / "rules.md").read_text()
    assert committed == GEN["render_rules_md"](), "docs/rules.md is stale: run `make docs`"


def test_readme_table_is_generated():
    readme = (ROOT / "README.md").read_text()
    table = readme.split(GEN["START"], 1)[1].split(GEN["END"], 1)[0]
    assert table == "\n" + GEN["render_readme_table"](), "README.md is stale: run `make docs`"
