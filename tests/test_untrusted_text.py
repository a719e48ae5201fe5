"""Text from a log, a script's source, a file name or an exception reaches no terminal
raw: every report of explain, check and run (text, JSON, SARIF, GitHub commands) shows
its control characters spelled out, while the script's own output passes through as
it is.  Real logs, real files with these names, real doctor processes; no torch."""
import json
import os

import pytest

from doctor_run import doctor_command

#: window title (OSC 0, ST and BEL ends), terminal reset, an OSC-8 hyperlink, a DCS
#: string, C1 CSI, backspaces, a carriage return, a bidi override
HOSTILE = ("\x1b]0;owned\x1b\\ \x1b]2;title\x07 \x1bc \x1b]8;;http://evil.example\x1b\\link"
           "\x1b]8;;\x1b\\ \x1bPq#0;2;0;0;0\x1b\\ \x9b2J \x9d0;x\x9c \x08\x08\x08 \r over "
           "\u202etxt.exe")
#: the same in a comment of a source file, where a carriage return would end the line
COMMENT = HOSTILE.replace("\r", "")
NAME = "da\x1b]0;T\x07ta\x1b[31m.py"


def raw_controls(text):
    """The raw ESC, BEL, backspace, carriage return and C1 characters in ``text``."""
    return sorted({c for c in text if c in "\x1b\x07\x08\r" or "\x80" <= c <= "\x9f"
                   or c == "\u202e"})


def strings(value):
    """Every string of a parsed JSON value, keys included, one a line: what ``jq -r``
    prints of them."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(strings(k) + "\n" + strings(v) for k, v in value.items())
    if isinstance(value, list):
        return "\n".join(map(strings, value))
    return ""


def crash_log(path):
    return (
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.11/site-packages/torch/utils/data/dataloader.py", '
        "line 1345, in _next_data\n"
        "    return self._process_data(data)\n"
        "KeyError: Caught KeyError in DataLoader worker process 0.\n"
        "Original Traceback (most recent call last):\n"
        '  File "%s", line 3, in __getitem__\n'
        "    return self.items[i]  # %s\n"
        "KeyError: '%s'\n" % (path, HOSTILE, HOSTILE))


def _no_raw(status, out, err):
    assert not raw_controls(out), (raw_controls(out), out)
    assert not raw_controls(err), (raw_controls(err), err)
    return out


@pytest.fixture
def log(tmp_path):
    """A log naming a file in the working directory whose name and line carry escapes."""
    (tmp_path / NAME).write_text("class D:\n    items = {}\n    x = 1  # %s\n" % COMMENT)
    path = tmp_path / "crash.log"
    path.write_text(crash_log(tmp_path / NAME), encoding="utf-8")
    return path


def test_explain_text_report_spells_out_every_control(log, tmp_path):
    status, _, out, err, _ = doctor_command(["explain", str(log)], str(tmp_path))
    assert status == 1, err
    _no_raw(status, out, err)
    assert "DLW205" in out
    # what the parser does not strip as colour is shown spelled out
    assert "\\x1bc" in out and "\\x9b2J" in out and "\\x08\\x08" in out, out


def test_explain_json_holds_no_control_even_once_decoded(log, tmp_path):
    status, report, out, err, _ = doctor_command(["explain", "--json", str(log)],
                                                 str(tmp_path))
    assert status == 1, err
    _no_raw(status, out, err)
    decoded = strings(report)  # what jq -r would print
    assert not raw_controls(decoded), raw_controls(decoded)
    assert report["diagnoses"][0]["code"] == "DLW205"


def test_explain_of_a_log_named_with_escapes(tmp_path):
    name = tmp_path / "c\x1b]0;x\x07.log"
    status, _, out, err, _ = doctor_command(["explain", str(name)], str(tmp_path))
    assert status == 2 and "no such file" in err
    _no_raw(status, out, err)
    name.write_text(crash_log(tmp_path / "data.py"))
    status, _, out, err, _ = doctor_command(["explain", str(name)], str(tmp_path))
    assert status == 1 and "c\\x1b]0;x\\x07.log" in out
    _no_raw(status, out, err)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_check_shows_a_file_name_and_a_comment_inert(tmp_path, fmt):
    (tmp_path / NAME).write_text(
        "from torch.utils.data import DataLoader\n\n\ndef main(ds):\n"
        "    return DataLoader(ds, num_workers=2, collate_fn=lambda b: b)  # %s\n" % COMMENT)
    status, _, out, err, _ = doctor_command(["check", "--format", fmt, "."], str(tmp_path))
    assert status == 1, err
    _no_raw(status, out, err)
    shown = strings(json.loads(out)) if fmt in ("json", "sarif") else out
    assert not raw_controls(shown), raw_controls(shown)
    # SARIF names the file by a URI: percent-encoded, as URIs are
    name = "da%1B%5D0%3BT%07ta%1B%5B31m.py" if fmt == "sarif" else "\\x07ta\\x1b[31m.py"
    assert "DLW102" in shown and name in shown


def test_check_fix_messages_show_the_file_name_inert(tmp_path):
    (tmp_path / NAME).write_text(
        "from torch.utils.data import DataLoader\n\n\ndef main(ds):\n"
        "    return DataLoader(ds, num_workers=2, collate_fn=lambda b: b)\n")
    status, _, out, err, _ = doctor_command(["check", "--fix", "."], str(tmp_path))
    assert "doctor: fixed" in err, err
    _no_raw(status, out, err)


def test_run_report_is_inert_and_the_scripts_own_output_is_not(tmp_path):
    """The script prints colour and raises with escapes in its message, from a file whose
    name has escapes: its own output passes through byte for byte, the report is inert."""
    (tmp_path / NAME).write_text(
        "import sys\n"
        "print('\\x1b[31mred\\x1b[0m')\n"
        "sys.stderr.write('\\x1b]0;own title\\x07\\n')\n"
        "raise ValueError(%r)\n" % HOSTILE)
    status, report, out, err, _ = doctor_command(["--json", NAME], str(tmp_path))
    assert status == 1, err
    assert not raw_controls(out), raw_controls(out)
    assert not raw_controls(strings(report))
    assert "\x1b[31mred\x1b[0m\n" in err and "\x1b]0;own title\x07\n" in err  # passed through
    status, _, out, err, _ = doctor_command([NAME], str(tmp_path))
    own, report_text = out.split("doctor: ", 1)
    assert own == "\x1b[31mred\x1b[0m\n"
    assert not raw_controls(report_text), raw_controls(report_text)
    assert "\\x1bc" in report_text and report_text.startswith("da\\x1b]0;T\\x07ta")
    assert os.path.exists(tmp_path / NAME)
