"""``python -m doctor check --format {text,json,sarif,github}`` on a real project tree.

The SARIF log is validated against the SARIF 2.1.0 JSON schema, vendored in
tests/sarif/ (from microsoft/sarif-sdk, src/Sarif/Schemata/sarif-2.1.0.json, MIT licence
in tests/sarif/LICENSE): no network is used.  Each format's findings are compared with
what real flake8 prints for the same files.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from doctor_run import doctor_command
from flake8_dlworker.catalog import RULES, RULES_DOC_URL

SCHEMA = Path(__file__).parent / "sarif" / "sarif-schema-2.1.0.json"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules.md"

LAMBDA = '''\
from torch.utils.data import DataLoader


def main():
    loader = DataLoader([1, 2], num_workers=2, collate_fn=lambda b: b)
    for batch in loader:
        print(batch)


main()
'''
#: a non-ASCII name before the lambda: flake8 counts bytes, SARIF and GitHub characters
ACCENT = LAMBDA.replace("loader = DataLoader(", "données = [1]; loader = DataLoader(")
HANDLE = '''\
from torch.utils.data import DataLoader, Dataset


class Lines(Dataset):
    def __init__(self, path):
        self.handle = open(path)

    def __len__(self):
        return 1

    def __getitem__(self, i):
        return i


if __name__ == "__main__":
    for batch in DataLoader(Lines("x.txt"), num_workers=2):
        pass
'''
CLEAN = '''\
from torch.utils.data import DataLoader


def double(b):
    return b


if __name__ == "__main__":
    for batch in DataLoader([1, 2], num_workers=2, collate_fn=double):
        pass
'''


def _project(root):
    """A tree with findings in three files (and in .venv and build, which flake8 checks),
    folders flake8 excludes, a clean file and a text file."""
    files = {"train.py": LAMBDA, "pkg/data.py": HANDLE, "pkg/sub/accent.py": ACCENT,
             "pkg/clean.py": CLEAN, "pkg/__init__.py": "",
             ".venv/lib/site.py": LAMBDA, ".git/hooks/x.py": LAMBDA, "build/lib/train.py": LAMBDA,
             "pkg/__pycache__/train.py": LAMBDA, "pkg/notes.txt": LAMBDA}
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _flake8(root, files):
    """[(path, line, byte column, code, text)] as real flake8 prints them."""
    out = subprocess.run([sys.executable, "-m", "flake8", "--select", "DLW", *files],
                         cwd=root, capture_output=True, text=True, timeout=120).stdout
    found = []
    for line in out.splitlines():
        path, row, col, message = line.split(":", 3)
        code, text = message.strip().split(" ", 1)
        found.append((os.path.normpath(path), int(row), int(col), code, text))
    return sorted(found)


def _char_column(root, path, line, byte_column):
    text = (root / path).read_bytes().splitlines()[line - 1]
    return len(text[:byte_column - 1].decode("utf-8")) + 1


def _line_end(root, path, line):
    """GitHub's endColumn: just after the line's last character."""
    return len((root / path).read_text(encoding="utf-8").splitlines()[line - 1]) + 1


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("project")
    _project(root)
    expected = _flake8(root, ["."])  # flake8's walk: its exclude list, nothing more
    assert {e[3] for e in expected} == {"DLW101", "DLW102", "DLW108"}, expected
    return root, expected


def test_sarif_validates_and_matches_flake8(project):
    root, expected = project
    status, _report, out, err, _left = doctor_command(["check", "--format", "sarif", "."], root)
    assert status == 1, err
    log = json.loads(out)
    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    validator(schema, format_checker=validator.FORMAT_CHECKER).validate(log)

    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [c for c, r in RULES.items() if r.static]
    anchors = set(re.findall(r'<a id="(dlw\d+)"></a>', DOCS.read_text()))
    for meta in rules:
        rule = RULES[meta["id"]]
        assert meta["shortDescription"]["text"] == rule.title
        assert meta["fullDescription"]["text"] == rule.explanation
        assert meta["helpUri"] == "%s#%s" % (RULES_DOC_URL, rule.code.lower())
        assert rule.code.lower() in anchors  # the help link lands on the rule's section
        assert meta["defaultConfiguration"]["level"] == (
            "warning" if rule.default_off else "error")
        assert re.fullmatch(r"[A-Z][A-Za-z0-9]+", meta["name"])

    got = []
    for result in run["results"]:
        (location,) = result["locations"]
        region = location["physicalLocation"]["region"]
        path = location["physicalLocation"]["artifactLocation"]["uri"]
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        code, text = result["message"]["text"].split(" ", 1)
        assert code == result["ruleId"]
        got.append((path, region["startLine"], region["startColumn"], code, text))
        # the region ends at the end of the finding's line, in characters
        line = (root / path).read_text(encoding="utf-8").splitlines()[region["startLine"] - 1]
        assert (region["endLine"], region["endColumn"]) == (region["startLine"], len(line) + 1)
        (fingerprint,) = result["partialFingerprints"].values()
        assert re.fullmatch(r"[0-9a-f]{32}:1", fingerprint)
    assert len({r["partialFingerprints"]["dlwFindingHash/v1"] for r in run["results"]}) == len(got)
    assert run["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": []}]
    assert run["columnKind"] == "unicodeCodePoints"
    assert sorted(got) == sorted(
        (p, line, _char_column(root, p, line, col), code, text)
        for p, line, col, code, text in expected)
    # the accented line: a character column, not flake8's byte column
    accent = [e for e in expected if e[0] == "pkg/sub/accent.py" and e[3] == "DLW102"][0]
    assert ("pkg/sub/accent.py", accent[1], accent[2] - 1, "DLW102", accent[4]) in got


def test_fingerprints_survive_lines_moving(project, tmp_path):
    """The same finding keeps its fingerprint when lines are added above it."""
    shutil.copytree(project[0], tmp_path / "moved")
    train = tmp_path / "moved" / "train.py"
    train.write_text("# a comment\n\n" + train.read_text())

    def prints(root):
        _status, _r, out, _err, _left = doctor_command(
            ["check", "--format", "sarif", "train.py"], root)
        return {(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]):
                r["partialFingerprints"]["dlwFindingHash/v1"]
                for r in json.loads(out)["runs"][0]["results"]}

    before, after = prints(project[0]), prints(tmp_path / "moved")
    assert sorted(before.values()) == sorted(after.values())
    assert {line for _code, line in after} == {line + 2 for _code, line in before}


def test_github_commands_have_the_documented_form(project):
    root, expected = project
    status, _report, out, err, _left = doctor_command(["check", "--format", "github", "."], root)
    assert status == 1, err
    lines = out.splitlines()
    assert sorted(lines) == sorted(
        "::error file=%s,line=%d,col=%d,endColumn=%d,title=%s::%s" % (
            p, line, _char_column(root, p, line, col), _line_end(root, p, line), code, text)
        for p, line, col, code, text in expected)
    assert all(re.fullmatch(r"::error file=[^,:]+,line=\d+,col=\d+,endColumn=\d+,"
                            r"title=DLW1\d\d::[^\n]+", x) for x in lines), lines


def test_text_and_json_report_the_same_files(project):
    root, expected = project
    status, report, _out, err, _left = doctor_command(["check", "--json", "."], root)
    assert status == 1, err
    status2, _report, out, _err, _left = doctor_command(["check", "--format", "json", "."], root)
    assert status2 == 1 and json.loads(out) == report  # --json is --format json
    assert {d["code"] for d in report["diagnoses"]} == {e[3] for e in expected}
    status, _report, out, err, _left = doctor_command(["check", "."], root)
    assert status == 1, err
    assert all(code in out for code in ("DLW101", "DLW102", "DLW108"))


def test_exit_zero_and_clean_files(project):
    root, _expected = project
    for fmt in ("text", "json", "sarif", "github"):
        status, _report, out, err, _left = doctor_command(
            ["check", "--format", fmt, "--exit-zero", "train.py"], root)
        assert status == 0 and "DLW102" in out, (fmt, err)
        status, _report, out, err, _left = doctor_command(
            ["check", "--format", fmt, "pkg/clean.py"], root)
        assert status == 0, (fmt, err)
    assert out == ""  # github: no command for a clean file
    status, _report, _out, err, _left = doctor_command(
        ["check", "--exit-zero", "missing.py"], root)
    assert status == 2 and "missing.py: no such file" in err  # errors still say so


def test_exclude_replaces_and_extend_exclude_adds(project):
    root, _expected = project
    _status, _r, out, _err, _left = doctor_command(["check", "--format", "github", "."], root)
    files = {re.search(r"file=([^,]+)", x).group(1) for x in out.splitlines()}
    # flake8's exclude list only: .venv and build are checked, as flake8 checks them
    assert {".venv/lib/site.py", "build/lib/train.py"} <= files
    assert not any(f.startswith(".git/") or "__pycache__" in f for f in files)
    _status, _r, out, _err, _left = doctor_command(
        ["check", "--format", "github", "--extend-exclude", "sub,train.py,.venv", "."], root)
    assert {re.search(r"file=([^,]+)", x).group(1) for x in out.splitlines()} == {
        "pkg/data.py"}
    _status, _r, out, _err, _left = doctor_command(
        ["check", "--format", "github", "--exclude", "build,__pycache__", "."], root)
    files = {re.search(r"file=([^,]+)", x).group(1) for x in out.splitlines()}
    assert ".git/hooks/x.py" in files and not any(f.startswith("build/") for f in files)


def test_broken_file_is_a_warning_and_counts_as_a_finding(tmp_path):
    """A file that is not valid Python is flake8's E999: a warning that names it, exit 1
    (whether named or found in a folder), and the other files are still checked."""
    (tmp_path / "train.py").write_text(LAMBDA)
    (tmp_path / "broken.py").write_text("def f(:\n")
    status, _report, out, err, _left = doctor_command(["check", "--format", "github", "."],
                                                      tmp_path)
    assert status == 1 and "file=train.py" in out
    assert err == "doctor: warning: broken.py:1: not valid Python: invalid syntax (skipped)\n"
    for fmt in ("text", "json", "sarif", "github"):
        status, _report, out, err, _left = doctor_command(
            ["check", "--format", fmt, "broken.py"], tmp_path)
        assert status == 1, (fmt, err)
        assert err == "doctor: warning: broken.py:1: not valid Python: invalid syntax " \
                      "(skipped)\n", fmt
    _status, _report, out, _err, _left = doctor_command(
        ["check", "--format", "sarif", "broken.py"], tmp_path)
    (invocation,) = json.loads(out)["runs"][0]["invocations"]
    (notification,) = invocation["toolExecutionNotifications"]
    assert not invocation["executionSuccessful"]
    assert notification["descriptor"] == {"id": "E999"}
    assert notification["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}


def test_many_files_on_every_core_give_the_same_findings(tmp_path):
    for i in range(40):  # above the count where the check uses a process pool
        (tmp_path / ("m%02d.py" % i)).write_text(LAMBDA if i % 2 else CLEAN)
    status, _report, out, err, _left = doctor_command(["check", "--format", "github", "."],
                                                      tmp_path)
    assert status == 1, err
    expected = _flake8(tmp_path, ["m%02d.py" % i for i in range(40)])
    assert len(out.splitlines()) == len(expected) == 40
