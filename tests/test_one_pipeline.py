"""One path from a target to its diagnoses, one sandbox, one writer: read from the
source, so that a second copy of any of them is caught when it is written."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("doctor", "flake8_dlworker")


def _calls(name, on=None):
    """(file, line) of every call of ``name`` (a plain name, or an attribute; with
    ``on`` only ``on.name``) in the packages' source (their examples aside: they are
    the users' scripts)."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "/causes/" in rel and ("/valid/" in rel or "/invalid/" in rel):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
                if isinstance(node, ast.Call):
                    func = node.func
                    called = func.id if isinstance(func, ast.Name) else getattr(
                        func, "attr", None)
                    owner = getattr(getattr(func, "value", None), "id", None)
                    if called == name and on in (None, owner):
                        found.append((rel, node.lineno))
    return found


def _files(name, on=None):
    return sorted({rel for rel, _line in _calls(name, on)})


def test_the_diagnosis_rules_are_called_from_one_place():
    assert [rel for rel, _line in _calls("diagnose")] == ["doctor/pipeline.py"], \
        _calls("diagnose")


def test_the_doctor_runs_a_target_from_one_place():
    assert _files("Run") == ["doctor/pipeline.py"], _calls("Run")


def test_one_module_makes_the_copy_a_fix_is_re_run_in():
    assert _files("Copy") == ["doctor/pipeline.py"], _calls("Copy")


def test_one_module_writes_the_files_the_doctor_changes():
    assert _files("replace", on="os") == ["doctor/patches/write.py"], _calls("replace", "os")
    for name in ("replace_checked", "write_atomic", "write_in_place"):
        assert _files(name) == ["doctor/patches/write.py"], (name, _calls(name))
