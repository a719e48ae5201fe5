"""One bad file never ends ``doctor check``: it is one warning line
(``doctor: warning: PATH: why (skipped)``), a SARIF notification, and the other files'
findings are reported; exit 1 with findings, 4 when the only news is a file that could
not be checked. Never exit 3, never a traceback."""
import json
import os

import pytest

from doctor_run import doctor_command

GOOD = '''\
from torch.utils.data import DataLoader


def main():
    return DataLoader([1, 2], num_workers=2, collate_fn=lambda b: b)
'''


def _check(root, *args):
    status, _report, out, err, _left = doctor_command(["check", *args, "."], root)
    assert "Traceback" not in err and status != 3, err
    return status, out, err


def _one_warning(err, path, why):
    line = "doctor: warning: %s: %s (skipped)\n" % (path, why)
    assert err == line, err


def _good_reported(out):
    (result,) = json.loads(out)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "good.py"


def _notified(out, uri):
    (invocation,) = json.loads(out)["runs"][0]["invocations"]
    (note,) = invocation["toolExecutionNotifications"]
    assert not invocation["executionSuccessful"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == uri
    return note


def test_a_tree_too_deep_to_build_is_skipped(tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "deep.py").write_text("x = " + " + ".join(["1"] * 5000) + "\n")
    status, out, err = _check(tmp_path, "--format", "sarif")
    assert status == 1
    why = "too deeply nested or too large to analyse (RecursionError)"
    _one_warning(err, "deep.py", why)
    _good_reported(out)
    assert _notified(out, "deep.py")["descriptor"] == {"id": "not-checked"}
    os.remove(tmp_path / "good.py")  # nothing found, one file not checked: exit 4
    status, out, err = _check(tmp_path, "--format", "text")
    assert status == 4 and "No DataLoader worker problem found." in out
    _one_warning(err, "deep.py", why)


def test_an_oversize_file_found_in_a_folder_is_skipped_before_it_is_read(tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    with open(tmp_path / "data_module.py", "wb") as handle:
        handle.truncate(45 * 2 ** 20)  # sparse: nothing is written, nothing may be read
    status, out, err = _check(tmp_path, "--format", "sarif")
    assert status == 1
    _one_warning(err, "data_module.py", "is 45 MB, larger than the 32 MB a file may be")
    _good_reported(out)
    _notified(out, "data_module.py")


def test_a_latin1_file_with_a_coding_cookie_is_checked_and_not_fixed(tmp_path):
    """flake8 reads it (the cookie), so check reports it; --fix writes UTF-8 only, so it
    says so in one line and fixes the next file."""
    latin = "# -*- coding: latin-1 -*-\n# données\n" + GOOD
    (tmp_path / "a_latin.py").write_bytes(latin.encode("latin-1"))
    (tmp_path / "good.py").write_text(GOOD)
    status, out, err = _check(tmp_path, "--format", "github")
    assert status == 1 and err == "" and out.count("::error") == 2, (out, err)
    assert "file=a_latin.py,line=7,col=57," in out
    status, out, err = _check(tmp_path, "--format", "github", "--fix")
    assert status == 1 and out.count("::error") == 1 and "file=a_latin.py" in out, out
    assert err.startswith("doctor: not fixed: a_latin.py: not UTF-8 text"), err
    assert "doctor: fixed good.py: " in err
    assert (tmp_path / "a_latin.py").read_bytes() == latin.encode("latin-1")


@pytest.mark.skipif(os.name != "posix", reason="a file name that is not UTF-8 needs POSIX")
def test_a_file_name_that_is_not_utf8(tmp_path):
    name = os.fsdecode(b"caf\xe9.py")
    (tmp_path / "good.py").write_text(GOOD)
    with open(os.path.join(os.fsencode(tmp_path), b"caf\xe9.py"), "w") as handle:
        handle.write(GOOD)
    status, out, err = _check(tmp_path, "--format", "sarif")
    assert status == 1 and err == "", err
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads(out)["runs"][0]["results"]}
    assert uris == {"good.py", "caf%E9.py"}  # percent-encoded byte for byte
    status, out, err = _check(tmp_path, "--format", "text")
    assert status == 1 and "caf\\udce9.py:5: DLW102" in out and name not in out


def _too_long_to_list(root):
    """A folder whose path is longer than the system lets a program name: listing it
    fails (ENAMETOOLONG) even for root, which reads any folder."""
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(20):
            os.mkdir("d" * 250, dir_fd=fd)
            inner = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def test_a_folder_that_cannot_be_listed_is_warned_about(tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    _too_long_to_list(tmp_path)
    status, out, err = _check(tmp_path, "--format", "sarif")
    assert status == 1
    (line,) = err.splitlines()
    assert line.startswith("doctor: warning: ./ddd") and "cannot list the folder: " \
        "File name too long (skipped)" in line, line
    _good_reported(out)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root reads a folder whatever its mode")
def test_an_unreadable_folder_is_warned_about(tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked").chmod(0)
    try:
        status, out, err = _check(tmp_path, "--format", "sarif")
    finally:
        (tmp_path / "locked").chmod(0o755)
    assert status == 1
    _one_warning(err, "./locked", "cannot list the folder: Permission denied")
    _good_reported(out)
