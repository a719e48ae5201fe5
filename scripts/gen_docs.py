"""Generate docs/rules.md and README.md's rule table from the catalog
(``flake8_dlworker/causes/``, read through ``flake8_dlworker/catalog.py``).

    python scripts/gen_docs.py           write both files
    python scripts/gen_docs.py --check   exit 1, naming the stale file, if either differs

Tests import ``render_rules_md()`` and ``render_readme_table()`` from this file.
"""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from flake8_dlworker.catalog import RULES  # noqa: E402

RULES_MD = Path("docs") / "rules.md"
README = Path("README.md")
START = "<!-- rules:start -->"
END = "<!-- rules:end -->"
INTRO = ("Generated from `flake8_dlworker/causes/` (one folder per code) by `make docs`; do not "
         "edit. Examples that need a dataset import `Squares` from "
         "[`example_data.py`](../flake8_dlworker/causes/example_data.py): the squares of 0 "
         "to 7, each through an optional `transform`.")


def anchor(rule):
    """The explicit anchor each rule's section carries (``<a id="dlw102">``)."""
    return rule.code.lower()


def _detected(rule):
    if not rule.static:
        return "runtime"
    return "static, off by default" if rule.default_off else "static"


def _table(header, link_prefix):
    rows = ["| code | %s | detected |" % header, "|---|---|---|"]
    for rule in RULES.values():
        rows.append("| [%s](%s#%s) | %s | %s |" % (
            rule.code, link_prefix, anchor(rule), rule.title.replace("|", "\\|"),
            _detected(rule)))
    return "\n".join(rows) + "\n"


def _code_block(source):
    return "```python\n%s\n```\n" % source.rstrip("\n")


def _section(rule):
    if rule.static:
        status = "Message: `%s %s`" % (rule.code, rule.message)
    else:
        status = "Summary: %s" % rule.message
    parts = [
        '<a id="%s"></a>\n## %s: %s\n' % (anchor(rule), rule.code, rule.title),
        status + "\n",
        "### What it does\n",
        rule.what_it_does.strip() + "\n",
        "### Why is this bad?\n",
        rule.why_bad.strip() + "\n",
        "### Example\n",
        _code_block(rule.example),
        "### Use instead\n",
        _code_block(rule.use_instead),
        "### Fix safety\n",
        rule.fix_safety.strip() + "\n",
        "### Options\n",
        rule.options.strip() + "\n",
        "### References\n",
        "".join("- %s\n" % ref for ref in rule.references),
    ]
    return "\n".join(parts)


def render_rules_md():
    """The whole text of docs/rules.md: the index table, then one section per code."""
    parts = ["# Rules\n", INTRO + "\n", _table("title", "")]
    parts.extend(_section(rule) for rule in RULES.values())
    return "\n".join(parts)


def render_readme_table():
    """README.md's rule table, the text between its two marker lines (ends in a newline)."""
    return _table("root cause", RULES_MD.as_posix())


def _readme_with_table(text):
    start = text.find(START)
    end = text.find(END)
    if start < 0 or end < start:
        raise ValueError("%s has no %s ... %s markers" % (README, START, END))
    return text[:start + len(START)] + "\n" + render_readme_table() + text[end:]


def _read(path):
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def main(argv=None, root=ROOT):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if a generated file is stale")
    args = parser.parse_args(argv)
    root = Path(root)
    rules_path = root / RULES_MD
    readme_path = root / README

    readme = _read(readme_path)
    if readme is None:
        print("%s is missing" % README, file=sys.stderr)
        return 1
    try:
        new_readme = _readme_with_table(readme)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 1
    new_rules = render_rules_md()

    if args.check:
        outputs = ((RULES_MD, rules_path, new_rules), (README, readme_path, new_readme))
        for rel, path, new in outputs:
            if _read(path) != new:
                print("%s is stale: run `make docs` (python scripts/gen_docs.py)"
                      % rel.as_posix(), file=sys.stderr)
                return 1
        return 0

    for path, new in ((rules_path, new_rules), (readme_path, new_readme)):
        if _read(path) != new:
            _write(path, new)
            print("wrote %s" % path.relative_to(root).as_posix())
    return 0


if __name__ == "__main__":
    sys.exit(main())
