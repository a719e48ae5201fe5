"""``python -m doctor --compare``: the script under its own start method, then under the
forced one, through the real CLI and real runs; and the comparison line on its own."""
import multiprocessing

import pytest

import needs
from doctor import compare
from doctor.evidence import Evidence
from doctor_run import doctor_command, run_doctor
from fixture_markers import FIXTURES, find

FORK_CONTEXT = find("clean_fork_context.py").parent
PATIENCE_S = 600
#: the host's own default start method (what a script gets when it asks for none)
DEFAULT = multiprocessing.get_all_start_methods()[0]
fork_default = pytest.mark.skipif(DEFAULT != "fork", reason="the host's default is %s" % DEFAULT)


def _ev(method, outcome):
    return Evidence(start_method=method, outcome=outcome)


@pytest.mark.parametrize("own, forced, line", [
    ("passed", "crashed", "passes under fork, crashes under spawn: will crash on Windows, "
                          "macOS and Python 3.14 Linux"),
    ("stopped", "timeout", "passes under fork, hangs under spawn: will crash on Windows, "
                           "macOS and Python 3.14 Linux"),
    ("timeout", "passed", "hangs under fork, passes under spawn: a cause only fork has; "
                          "spawn avoids it"),
    ("crashed", "crashed", "crashes under fork, crashes under spawn"),
    ("passed", "stopped", "passes under fork, passes under spawn"),
])
def test_the_line_says_how_the_runs_differ(own, forced, line):
    assert compare.summary(_ev("fork", own), _ev("spawn", forced), "spawn") == line


def test_one_run_when_the_scripts_own_method_is_the_forced_one():
    ev = _ev("spawn", "crashed")
    assert compare.summary(ev, ev, "spawn") == (
        "the script's own start method is spawn, the forced one: one run tells all")
    assert compare.summary(ev, ev, "forkserver") == (
        "crashes under spawn; not run under forkserver")  # a signal ended the doctor first


@needs.torch
@needs.posix
def test_a_loader_that_asks_for_fork_passes_there_and_crashes_under_spawn():
    status, report, _out, err, left = run_doctor(
        ["--compare", "--json", "clean_fork_context.py"], FORK_CONTEXT, limit=PATIENCE_S)
    assert not left, left
    assert status == 1, err[-3000:]
    found = report["compare"]
    assert found["summary"] == ("passes under fork, crashes under spawn: will crash on "
                                "Windows, macOS and Python 3.14 Linux"), found
    own, forced = found["runs"]
    assert (own["start_method"], own["outcome"], own["diagnoses"]) == ("fork", "passed", [])
    assert (forced["start_method"], forced["outcome"]) == ("spawn", "crashed")
    assert [(d["code"], d["line"]) for d in forced["diagnoses"]][:1] == [("DLW102", 12)]
    # the report itself is the forced run's, as without --compare
    assert report["start_method"] == "spawn" and report["diagnoses"] == forced["diagnoses"]


@needs.torch
@needs.linux
@fork_default
def test_a_lock_held_at_fork_hangs_only_under_fork_and_names_the_thread():
    status, report, _out, err, left = run_doctor(
        ["--compare", "--json", "--timeout", "60", "fork_only_lock_held_at_fork.py"],
        FIXTURES / "runtime", limit=PATIENCE_S)
    assert not left, left
    assert status == 1, err[-3000:]
    found = report["compare"]
    assert found["summary"] == ("hangs under fork, passes under spawn: a cause only fork "
                                "has; spawn avoids it"), found
    own, forced = found["runs"]
    assert (own["start_method"], own["outcome"]) == ("fork", "timeout")
    first = own["diagnoses"][0]
    assert (first["code"], first["line"]) == ("DLW206", 25), own["diagnoses"]
    evidence = "\n".join(first["evidence"])
    assert "it waits in __getitem__, fork_only_lock_held_at_fork.py:25" in evidence, evidence
    assert "ran other threads: 'flush_stats at fork_only_lock_held_at_fork.py:17'" in \
        evidence, evidence
    assert (forced["start_method"], forced["outcome"], forced["diagnoses"]) == (
        "spawn", "passed", [])


@needs.torch
@needs.posix
def test_terminal_report_shows_both_runs_then_the_line():
    status, _report, out, err, left = run_doctor(
        ["--compare", "--max-batches", "2", "clean_fork_context.py"], FORK_CONTEXT,
        limit=PATIENCE_S)
    assert not left, left
    assert status == 1, err[-3000:]
    own = out.index("doctor: clean_fork_context.py was stopped under fork")
    forced = out.index("doctor: clean_fork_context.py crashed under spawn")
    line = out.index("compare: passes under fork, crashes under spawn")
    assert own < forced < line, out
    assert "  under spawn: crashed (exit status 1): DLW102 at clean_fork_context.py:12" in out


@pytest.mark.parametrize("args, says", [
    (["--compare", "--apply", "x.py"], "--compare reports; run --verify or --apply without it"),
    (["--compare", "--verify", "x.py"], "--compare reports; run --verify or --apply without it"),
])
def test_compare_refuses_what_it_cannot_do(tmp_path, args, says):
    (tmp_path / "x.py").write_text("print('hi')\n")
    status, _report, out, err, left = doctor_command(args, tmp_path)
    assert (status, out) == (2, ""), err
    assert err.strip() == "doctor: error: " + says
    assert (tmp_path / "x.py").read_text() == "print('hi')\n"  # nothing ran or changed


def test_compare_refuses_a_notebook():
    status, _report, out, err, left = doctor_command(
        ["--compare", "clean_dataset_from_module.ipynb"], FIXTURES / "notebooks")
    assert (status, out) == (2, ""), err
    assert err.strip() == ("doctor: error: --compare runs scripts; a notebook runs under "
                           "the forced start method only")
