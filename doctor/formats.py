"""``doctor check --format sarif|github``: the static findings for CI.

``sarif`` is a SARIF 2.1.0 log (GitHub code scanning and other viewers): one run whose
driver carries every static rule of the catalog, and one result per finding with its
region.  ``github`` prints one GitHub Actions workflow command per finding, which the
runner turns into an annotation on the line::

    ::error file=train.py,line=14,col=27,title=DLW102::lambda passed as collate_fn ...

A notebook's finding names the notebook, its line and column are in the cell, and the
message starts with the cell, counted from 1 as ruff counts it (``cell 3: ...``); SARIF
also gives the cell's 0-based index as the result's property ``cell``.

File names are untrusted: both formats print them inert (:mod:`flake8_dlworker.untrusted`).
"""
import json
import os
from urllib.parse import quote

import flake8_dlworker
from flake8_dlworker.catalog import RULES, RULES_DOC_URL
from flake8_dlworker.notebook import NotebookError, cell_name, parse
from flake8_dlworker.untrusted import inert, inert_tree

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def static_rules():
    return [rule for rule in RULES.values() if rule.static]


def level(rule):
    """SARIF level: a crash is an error; host-dependent advice (off by default) a warning."""
    return "warning" if rule.default_off else "error"


def help_uri(rule):
    return "%s#%s" % (RULES_DOC_URL, rule.code.lower())


def _rule_name(rule):
    """A rule's title as SARIF's name wants it: ``LambdaReachesADataloaderWorker``."""
    words = "".join(c if c.isalnum() else " " for c in rule.title).split()
    return "".join(word[:1].upper() + word[1:] for word in words)


def _sarif_rule(rule):
    return {
        "id": rule.code,
        "name": _rule_name(rule),
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.explanation},
        "helpUri": help_uri(rule),
        "help": {"text": "%s\nfix: %s" % (rule.explanation, rule.fix_title),
                 "markdown": "%s\n\n**Fix:** %s\n\n[Rule documentation](%s)" % (
                     rule.what_it_does, rule.fix_title, help_uri(rule))},
        "defaultConfiguration": {"level": level(rule)},
        "properties": {"tags": ["pytorch", "dataloader", "multiprocessing"]},
    }


def _artifact(path):
    """artifactLocation: a relative path stays relative (to the checkout), else a file URI."""
    if os.path.isabs(path):
        return {"uri": "file://" + quote(path.replace(os.sep, "/"))}
    return {"uri": quote(os.path.normpath(path).replace(os.sep, "/"))}


def _code_point_column(finding, cache):
    """ast (and flake8) count UTF-8 bytes; SARIF's ``unicodeCodePoints`` and GitHub's
    annotations count characters."""
    path, cell, line = finding["path"], finding.get("cell"), finding["line"]
    if (path, cell) not in cache:
        cache[path, cell] = _lines(path, cell)
    lines = cache[path, cell]
    if not 1 <= line <= len(lines):
        return finding["col"]
    return len(lines[line - 1][:finding["col"] - 1].decode("utf-8", "replace")) + 1


def _lines(path, cell):
    """The file's lines as bytes; a notebook's: the cell's ([] when unreadable)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        if cell is None:
            return data.splitlines()
        found = parse(data).cell(cell)
    except (OSError, NotebookError):
        return []
    return found.source.encode("utf-8").splitlines() if found is not None else []


def _text(finding):
    """The message, after the cell of a notebook's finding."""
    if finding.get("cell") is None:
        return finding["text"]
    return "%s: %s" % (cell_name(finding["cell"]), finding["text"])


def sarif_log(findings):
    """The SARIF 2.1.0 log (a dict) for findings ``[{path, line, col, code, text}]``."""
    rules = static_rules()
    index = {rule.code: i for i, rule in enumerate(rules)}
    cache = {}
    results = []
    for finding in findings:
        rule = RULES[finding["code"]]
        region = {"startLine": finding["line"],
                  "startColumn": _code_point_column(finding, cache)}
        result = {
            "ruleId": rule.code,
            "ruleIndex": index[rule.code],
            "level": level(rule),
            "message": {"text": "%s %s" % (rule.code, _text(finding))},
            "locations": [{"physicalLocation": {"artifactLocation": _artifact(finding["path"]),
                                                "region": region}}],
        }
        if finding.get("cell") is not None:
            result["properties"] = {"cell": finding["cell"]}
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "flake8-dlworker",
                "version": flake8_dlworker.__version__,
                "informationUri": RULES_DOC_URL,
                "rules": [_sarif_rule(rule) for rule in rules],
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def sarif_text(findings):
    return json.dumps(inert_tree(sarif_log(findings)), indent=2, ensure_ascii=True) + "\n"


def _escape_data(text):
    return inert(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text):
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_text(findings):
    """One workflow command per finding: ``::error file=..,line=..,col=..,title=CODE::text``."""
    out = []
    cache = {}
    for finding in findings:
        rule = RULES[finding["code"]]
        column = _code_point_column(finding, cache)
        out.append("::%s file=%s,line=%d,col=%d,title=%s::%s\n" % (
            level(rule), _escape_property(finding["path"]), finding["line"], column,
            _escape_property(rule.code), _escape_data(_text(finding))))
    return "".join(out)
