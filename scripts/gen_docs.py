"""Write docs/rules.md and README.md's rule table from the catalog.

    python scripts/gen_docs.py           # rewrite both files
    python scripts/gen_docs.py --check   # exit 1 when a committed file is stale
"""
import argparse
import sys
from pathlib import Path

from flake8_dlworker.catalog import RULES

ROOT = Path(__file__).resolve().parents[1]
RULES_MD = ROOT / "docs" / "rules.md"
README = ROOT / "README.md"
START, END = "<!-- rules:start -->", "<!-- rules:end -->"


def _kind(rule):
    if not rule.static:
        return "runtime"
    return "static, off by default" if rule.default_off else "static"


def render_readme_table():
    lines = ["| code | root cause | detected |", "|---|---|---|"]
    for rule in RULES.values():
        lines.append("| [%s](docs/rules.md#%s) | %s | %s |" % (
            rule.code, rule.code.lower(), rule.title, _kind(rule)))
    return "\n".join(lines) + "\n"


def _code_block(source):
    return "```python\n" + source.rstrip("\n") + "\n```\n"


def render_rules_md():
    out = ["# Rules\n",
           "Generated from `flake8_dlworker/catalog.py` by `make docs`; do not edit.\n",
           "| code | title | detected |", "|---|---|---|"]
    out += ["| [%s](#%s) | %s | %s |" % (r.code, r.code.lower(), r.title, _kind(r))
            for r in RULES.values()]
    for rule in RULES.values():
        out += ["", '<a id="%s"></a>' % rule.code.lower(),
                "## %s: %s\n" % (rule.code, rule.title),
                "Message: `%s %s`\n" % (rule.code, rule.message) if rule.static else
                "Summary: %s\n" % rule.message,
                "### What it does\n", rule.what_it_does + "\n",
                "### Why is this bad?\n", rule.why_bad + "\n",
                "### Example\n", _code_block(rule.example),
                "### Use instead\n", _code_block(rule.use_instead),
                "### Fix safety\n", rule.fix_safety + "\n",
                "### Options\n", rule.options + "\n",
                "### References\n"]
        out += ["- " + ref for ref in rule.references]
    return "\n".join(out) + "\n"


def _with_table(readme):
    head, start, rest = readme.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise SystemExit("README.md lacks the %s / %s markers" % (START, END))
    return head + START + "\n" + render_readme_table() + END + tail


def main(argv=None):
    parser = argparse.ArgumentParser(description="Generate the rule docs from the catalog.")
    parser.add_argument("--check", action="store_true",
                        help="report stale files instead of writing them")
    args = parser.parse_args(argv)
    wanted = {RULES_MD: render_rules_md(), README: _with_table(README.read_text())}
    stale = [p for p, text in wanted.items() if not p.exists() or p.read_text() != text]
    if args.check:
        if stale:
            print("stale: %s (run `make docs`)" % ", ".join(p.name for p in stale))
            return 1
        return 0
    for path in stale:
        path.parent.mkdir(exist_ok=True)
        path.write_text(wanted[path])
    return 0


if __name__ == "__main__":
    sys.exit(main())
