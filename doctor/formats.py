"""``doctor check --format sarif|github``: the static findings for CI.

``sarif`` is a SARIF 2.1.0 log (GitHub code scanning and other viewers): one run whose
driver carries every static rule of the catalog, one result per finding with its region
and a fingerprint, and one ``toolExecutionNotification`` per file that could not be
checked.  ``github`` prints one GitHub Actions workflow command per finding, which the
runner turns into an annotation on the line::

    ::error file=train.py,line=14,col=27,endColumn=70,title=DLW102::lambda passed as ...

Lines count from 1; columns count characters (code points) from 1, the convention of
SARIF's ``unicodeCodePoints`` and of GitHub's annotations, where flake8 counts UTF-8
bytes. A region ends at the end of the finding's line.

A notebook's finding is placed on the line of the ``.ipynb`` file that holds the cell's
line (GitHub reads the line of the file it names); the message starts with the cell and
the line in it, counted as ruff counts them (``cell 3:2: ...``), and SARIF also gives the
cell's 0-based index and the line in it as the result's properties ``cell`` and
``cellLine``.

File names are untrusted: both formats print them inert (:mod:`flake8_dlworker.untrusted`).
"""
import hashlib
import io
import json
import os
import tokenize
from urllib.parse import quote

import flake8_dlworker
from flake8_dlworker.catalog import RULES, RULES_DOC_URL
from flake8_dlworker.notebook import NotebookError, cell_place, file_places, is_notebook, parse
from flake8_dlworker.untrusted import inert, inert_tree

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
#: the key of the results' partialFingerprints (versioned: a new hash is a new key)
FINGERPRINT = "dlwFindingHash/v1"


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


def _uri(path):
    """artifactLocation's uri: a relative path stays relative (to the checkout), else a
    file URI; a name that is not UTF-8 is percent-encoded byte for byte."""
    name = os.fsencode(path if os.path.isabs(path) else os.path.normpath(path))
    name = name.replace(os.fsencode(os.sep), b"/")
    return ("file://" if os.path.isabs(path) else "") + quote(name)


class _Places:
    """Where each finding is, in the convention of SARIF and GitHub: the file's line and
    columns counted in characters (code points) from 1, the region ending at the end of
    that line; for a notebook, the line of the ``.ipynb`` file that holds the cell's line.
    flake8's ``col`` counts the UTF-8 bytes of the source as Python decoded it."""

    def __init__(self):
        self._files = {}

    def _read(self, path):
        if path not in self._files:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                data = None
            self._files[path] = _Source(path, data)
        return self._files[path]

    def of(self, finding):
        """(line, column, end column, the source line's text) of ``finding``."""
        return self._read(finding["path"]).place(finding)


class _Source:
    def __init__(self, path, data):
        self.data = data
        self.notebook = is_notebook(path)
        self._lines = self._cells = None

    def _cell_lines(self, cell):
        if self._cells is None:
            try:
                self._cells = parse(self.data), file_places(self.data)
            except NotebookError:
                self._cells = None, None
        book, places = self._cells
        found = book.cell(cell) if book is not None else None
        return (found.source.splitlines() if found is not None else []), places

    def place(self, finding):
        line, col = finding["line"], finding["col"]
        if self.data is None:
            return line, col, col, ""
        if self.notebook:
            lines, places = self._cell_lines(finding.get("cell"))
        else:
            lines, places = self._file_lines(), None
        text = lines[line - 1] if 1 <= line <= len(lines) else ""
        column = len(text.encode("utf-8")[:col - 1].decode("utf-8", "replace")) + 1
        if places is not None:
            found = places(finding["cell"], line, column)
            if found is not None:
                return found.line, found.column, found.end_column, text
        return line, column, max(column, len(text) + 1), text

    def _file_lines(self):
        """The lines as Python decodes them (the coding cookie, else UTF-8; latin-1 when
        that fails, as flake8 reads them)."""
        if self._lines is None:
            try:
                encoding = tokenize.detect_encoding(io.BytesIO(self.data).readline)[0]
                self._lines = [line.decode(encoding) for line in self.data.splitlines()]
            except (SyntaxError, UnicodeError, LookupError):
                self._lines = [line.decode("latin-1") for line in self.data.splitlines()]
            if self._lines and self._lines[0].startswith("\ufeff"):
                self._lines[0] = self._lines[0][1:]
        return self._lines


def _text(finding):
    """The message, after the cell and line of a notebook's finding (``cell 3:2: ``)."""
    if finding.get("cell") is None:
        return finding["text"]
    return "%s: %s" % (cell_place(finding["cell"], finding["line"]), finding["text"])


def fingerprint(code, uri, text, seen):
    """A finding's identity across commits: a hash of its code, its file and its source
    line with the spaces normalised (not the line number, so it survives lines moving),
    and which of the identical ones it is."""
    digest = hashlib.sha256("\0".join((code, uri, " ".join(text.split()))).encode(
        "utf-8", "surrogateescape")).hexdigest()[:32]
    seen[digest] = seen.get(digest, 0) + 1
    return "%s:%d" % (digest, seen[digest])


def _result(finding, places, index, seen):
    rule = RULES[finding["code"]]
    line, column, end_column, text = places.of(finding)
    uri = _uri(finding["path"])
    result = {
        "ruleId": rule.code,
        "ruleIndex": index[rule.code],
        "level": level(rule),
        "message": {"text": "%s %s" % (rule.code, _text(finding))},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": uri},
            "region": {"startLine": line, "startColumn": column,
                       "endLine": line, "endColumn": end_column}}}],
        "partialFingerprints": {FINGERPRINT: fingerprint(rule.code, uri, text, seen)},
    }
    if finding.get("cell") is not None:  # the place in the cell, as text and JSON give it
        result["properties"] = {"cell": finding["cell"], "cellLine": finding["line"]}
    return result


def _notification(problem):
    """A file (or a notebook's cell) that was not checked: a toolExecutionNotification."""
    location = {"artifactLocation": {"uri": _uri(problem.path)}}
    if problem.line and problem.cell is None:
        location["region"] = {"startLine": problem.line}
    found = {"level": "error",
             "message": {"text": "%s: %s (skipped)" % (problem.place(), problem.reason)},
             "descriptor": {"id": "E999" if problem.syntax else "not-checked"},
             "locations": [{"physicalLocation": location}]}
    if problem.cell is not None:
        found["properties"] = {"cell": problem.cell, "cellLine": problem.line}
    return found


def sarif_log(findings, problems=()):
    """The SARIF 2.1.0 log (a dict) for findings ``[{path, line, col, code, text}]`` and
    the files that could not be checked (:class:`doctor.lint.Problem`)."""
    rules = static_rules()
    index = {rule.code: i for i, rule in enumerate(rules)}
    places, seen = _Places(), {}
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
            "invocations": [{
                "executionSuccessful": not problems,
                "toolExecutionNotifications": [_notification(p) for p in problems],
            }],
            "columnKind": "unicodeCodePoints",
            "results": [_result(finding, places, index, seen) for finding in findings],
        }],
    }


def sarif_text(findings, problems=()):
    return json.dumps(inert_tree(sarif_log(findings, problems)), indent=2,
                      ensure_ascii=True) + "\n"


def _escape_data(text):
    return inert(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text):
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_text(findings):
    """One workflow command per finding: ``::error file=..,line=..,col=..,endColumn=..,
    title=CODE::text`` (the files not checked are warnings on stderr)."""
    out = []
    places = _Places()
    for finding in findings:
        rule = RULES[finding["code"]]
        line, column, end_column, _text_line = places.of(finding)
        out.append("::%s file=%s,line=%d,col=%d,endColumn=%d,title=%s::%s\n" % (
            level(rule), _escape_property(finding["path"]), line, column, end_column,
            _escape_property(rule.code), _escape_data(_text(finding))))
    return "".join(out)
