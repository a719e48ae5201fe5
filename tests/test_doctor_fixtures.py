"""Every named example and fixture through ``python -m doctor --json``, a real run under
a forced spawn start method: crashing fixtures really crash with the runtime error their rule names
and the doctor names that cause first, at the marked line; the fixtures of rules that
do not crash (DLW105, DLW109, DLW110, DLW111) run to the end and show the
misbehaviour; clean fixtures run to the end with no diagnosis; and no run leaves a
process behind."""
import ast
import json
import os
import re

import pytest

import recordings
from doctor import evidence
from doctor.diagnose import diagnose
from doctor.report import to_json as report_of
from doctor.static import static_findings
from doctor_run import run_doctor
from fixture_markers import expected_findings, find, run_files, short
from flake8_dlworker.catalog import RULES


def _duplicated_samples(output, host):
    samples = _printed(output, "samples:")
    return len(samples) > len(set(samples))


def _same_draws_in_every_worker(output, host):
    draws = _printed(output, "draws:")
    streams = list(draws.values())
    return len(streams) >= 2 and all(stream == streams[0] for stream in streams)


def _too_many_workers_warning(output, host):
    """torch's warning for one loader, or the ranks of a distributed fixture saying how
    many workers they start together (torch checks each rank alone)."""
    ranks = re.search(r"(\d+) ranks x (\d+) workers on (\d+) usable CPUs", output)
    if ranks:
        world, workers, cpus = map(int, ranks.groups())
        return world * workers > cpus
    if len(os.sched_getaffinity(0)) >= 64:
        pytest.skip("this host can run 64 workers: torch has nothing to warn about")
    return re.search(r"This DataLoader will create \d+ worker processes in total", output)


def _pinned_without_harm_here(output, host):
    # the harm, page-locked RAM running out, needs a small host with an accelerator;
    # here the fixture only shows that the loader was asked to pin (torch warns when it
    # finds no accelerator to pin for)
    return "'pin_memory' argument is set as true" in output or host.get("cuda")


def _same_order_every_epoch(output, host):
    """Each rank (or the one process) printed the same order for every epoch."""
    orders = {}
    # ranks share one output: a line of one may land in the middle of another's
    for rank, order in re.findall(r"(?:rank (\d+) )?epoch \d+: (\[[^\]]*\])", output):
        orders.setdefault(rank, []).append(order)
    return bool(orders) and all(len(seen) >= 2 and len(set(seen)) == 1
                                for seen in orders.values())


#: rules whose fixtures do not crash: what each run must show instead
MISBEHAVES = {
    "DLW112": _same_order_every_epoch,
    "DLW109": _duplicated_samples,
    "DLW111": _same_draws_in_every_worker,
    "DLW110": _too_many_workers_warning,
    "DLW105": _pinned_without_harm_here,
}


def _printed(output, label):
    """The Python literal a fixture printed after ``label``."""
    for line in output.splitlines():
        if line.startswith(label):
            return ast.literal_eval(line[len(label):].strip())
    raise AssertionError("no %r line in the output:\n%s" % (label, output[-3000:]))


#: ``# doctor: DLW2xx`` on the line the diagnosis must point at, or ``# doctor: DLW108
#: at data.py:20`` for a line of a module beside the program (where its class keeps a
#: handle)
DOCTOR_MARKER = re.compile(r"#\s*doctor:\s*(DLW\d{3})(?:\s+at\s+([\w./-]+\.py):(\d+))?")
#: ``# doctor: passes`` in a module that other fixtures import: running it by itself
#: starts nothing and passes, and the doctor reports what flake8 reports for it (its
#: markers: a class it defines that another module hands to workers)
DOCTOR_PASSES = re.compile(r"#\s*doctor:\s*passes\b")
#: fixtures the doctor itself stops: a pool starts a new process for each one that dies
#: re-running the unguarded script, for ever (doctor.supervisor.RESPAWN_LIMIT)
STOPPED = {"dlw101_pool.py"}
#: causes the doctor cannot see on this host, with the reason
NOT_ON_THIS_HOST = {
    "DLW105": "pin_memory only exhausts a host with little RAM; the check is static",
}
#: flake8 is right to stay silent on these, and the doctor right to report them
DOCTOR_ONLY = {
    # the doctor forces spawn even where a loader asks for fork, as on Windows and
    # macOS: the lambda that fork tolerates then breaks
    "clean_fork_context.py": ("DLW102", 12),
}


def expected(path):
    """(code, line) the doctor must report first, or None for a clean fixture."""
    want = expected_place(path)
    return want and want[:2]


def expected_place(path):
    """(code, line, file) the doctor must report first (``file``: the program's name,
    or the module beside it that a marker names), or None for a clean fixture."""
    if path.name in DOCTOR_ONLY:
        return DOCTOR_ONLY[path.name] + (path.name,)
    if DOCTOR_PASSES.search(path.read_text()):
        return None
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        match = DOCTOR_MARKER.search(line)
        if match and match.group(2):
            return match.group(1), int(match.group(3)), match.group(2)
        if match:
            return match.group(1), lineno, path.name
    found = sorted(expected_findings(path))
    if not found:
        return None
    line, _col, code = found[0]
    return code, line, path.name


#: the rank of the first diagnosis of each distributed fixture
FIRST_RANK = {"dlw201_rank_all_reduce.py": 1, "dlw201_spawn_all_reduce.py": 1,
              "dlw110_rank_workers.py": 0, "dlw112_rank_set_epoch.py": 0}


#: the real runs the fast tier keeps, one per way a run can go: a pickling crash, an
#: unguarded start, a handle, a worker killed by a signal, a native crash, a hang, a
#: clean run
E2E = {"dlw102_collate.py", "dlw101_loop.py", "dlw108_open_file.py", "dlw201_sigkill.py",
       "dlw203_segfault.py", "dlw206_timeout.py", "clean_two_loaders.py"}


def _cases(e2e=()):
    for target, cwd, path in recordings.cases():
        marks = [pytest.mark.e2e] if path.name in e2e else []
        yield pytest.param(target, cwd, path, marks=marks,
                           id=path.parent.name if path.name == "__main__.py" else short(path))


@pytest.mark.parametrize("target, cwd, path", list(_cases(E2E)))
def test_fixture_under_the_doctor(target, cwd, path):
    status, report, _out, output, left = run_doctor(recordings.doctor_args(path, target), cwd)
    # with --json the script's own stdout and stderr pass through on stderr
    assert not left, "processes left behind: %s" % left
    assert report is not None, output[-3000:]
    check_run(path, status, report, output)


@pytest.mark.parametrize("target, cwd, path", list(_cases()))
def test_recorded_run_of_the_fixture(target, cwd, path):
    """The fixture's recorded real run (tests/recordings.py), replayed through today's
    diagnosis and static checker: what the real run would report, without running it."""
    check_run(path, *replay(target, cwd, path))


def replay(target, cwd, path, variant=None):
    """(status, JSON report, output) of the recorded run of ``path``, its evidence put
    through today's static checker and diagnosis, in the folder the doctor ran in."""
    try:
        recorded = recordings.load(path, variant)
    except recordings.Stale as exc:
        pytest.fail(str(exc))
    here = os.getcwd()
    os.chdir(cwd)  # paths in the report are relative to the working directory
    try:
        ev = evidence.from_json(recorded["evidence"])
        ev.static = static_findings(str(path) if target[0] == "-m" else target[0],
                                    ev.start_method)
        diagnoses = diagnose(ev)
        return 1 if diagnoses else 0, report_of(ev, diagnoses), recorded["output"]
    finally:
        os.chdir(here)


def test_recorded_fork_run_names_copy_on_access():
    """dlw210_fork_copy_on_access.py recorded under --start-method fork (its real run:
    tests/test_memory_forecast.py): the workers' memory rose with the batches while the
    dataset held large Python lists."""
    ((target, cwd, path, variant),) = recordings.variant_cases()
    status, report, _output = replay(target, cwd, path, variant)
    first = report["diagnoses"][0]
    assert (status, first["code"], first["line"]) == (1, "DLW210", 22), report["diagnoses"]


#: causes no run on this host shows, each with the reason; their evidence is checked on
#: real logs from the hosts that show them (tests/logs, tests/test_explain.py)
NOT_RECORDED_HERE = {
    "DLW105": "the pin-memory thread dies of page-locked memory on a small host with an "
              "accelerator; this host has 24 GiB and no GPU",
    "DLW207": "WinError 1455 exists on Windows only",
}


def test_every_cause_is_replayed_from_a_real_recording():
    """Each runtime-diagnosable cause of the catalog is the first diagnosis of at least
    one recorded real run, replayed in the fast tier."""
    from flake8_dlworker.catalog import RULES

    named = set()
    for target, cwd, path in recordings.cases():
        _status, report, _output = replay(target, cwd, path)
        named.update(d["code"] for d in report["diagnoses"][:1])
    for target, cwd, path, variant in recordings.variant_cases():
        _status, report, _output = replay(target, cwd, path, variant)
        named.update(d["code"] for d in report["diagnoses"][:1])
    assert set(RULES) - set(NOT_RECORDED_HERE) - named == set()
    assert not named & set(NOT_RECORDED_HERE)


def test_a_stale_recording_names_the_command_that_records_it(tmp_path, monkeypatch):
    path = find("dlw102_collate.py")
    recorded = recordings.file_of(path).read_text(encoding="utf-8")
    monkeypatch.setattr(recordings, "FOLDER", tmp_path)
    with pytest.raises(recordings.Stale, match=r"no recorded run of DLW102/invalid/"
                       r"dlw102_collate.py: record it with `python tests/recordings.py "
                       r"dlw102_collate.py`"):
        recordings.load(path)
    stale = json.loads(recorded)
    stale["fingerprint"] = "0" * 64
    recordings.file_of(path).write_text(json.dumps(stale), encoding="utf-8")
    with pytest.raises(recordings.Stale, match=r"is stale .*`python tests/recordings.py "
                       r"dlw102_collate.py`"):
        recordings.load(path)


def check_run(path, status, report, output):
    """What a run of the fixture must show: its exit status, its JSON report and its
    output (the script's own and the doctor's, on stderr)."""
    want = expected(path)
    assert report["schema"] == 1 and report["start_method"] == "spawn"
    if DOCTOR_PASSES.search(path.read_text()):
        found = {(d["code"], d["line"]) for d in report["diagnoses"]}
        assert found == {(code, line) for line, _col, code in expected_findings(path)}
        assert (status, report["outcome"]) == (1 if found else 0, "passed"), output[-3000:]
        return
    if want is None:
        assert (status, report["outcome"], report["diagnoses"]) == (0, "passed", []), \
            output[-3000:]
        return
    code, line = want
    if code in MISBEHAVES:
        assert report["outcome"] == "passed", output[-3000:]
        assert MISBEHAVES[code](output, report["host"]), output[-3000:]
    elif RULES[code].texts("crash_texts") and path.name not in DOCTOR_ONLY:
        if code == "DLW107" and report["host"].get("cuda"):
            pytest.skip("under spawn a CUDA host runs this, one CUDA context per worker")
        assert report["outcome"] == ("timeout" if path.name in recordings.TIMEOUTS else
                                     "stopped" if path.name in STOPPED else "crashed")
        assert any(text in output for text in RULES[code].texts("crash_texts")), \
            output[-3000:]
    if path.name in recordings.TIMEOUTS:
        assert report["outcome"] == "timeout"
    if code in NOT_ON_THIS_HOST:
        return
    assert status == 1, output[-3000:]
    first = report["diagnoses"][0]
    assert (first["code"], first["line"]) == (code, line), \
        (report["diagnoses"], output[-3000:])
    assert first.get("rank") == FIRST_RANK.get(path.name), report["diagnoses"]
    name = expected_place(path)[2]
    if name != path.name:  # a line of a module beside the program
        assert os.path.basename(first["path"] or "") == name, report["diagnoses"]
    assert first["evidence"] and first["explanation"]


def test_every_rule_has_a_fixture_the_doctor_runs():
    codes = {want[0] for path in run_files()
             for want in [expected(path)] if want}
    assert codes >= {"DLW%d" % n for n in list(range(101, 112)) + list(range(201, 207)) + [209]}


#: runs whose diagnosis has a patch maker, and whether the default run hands over its
#: patch: a zip archive opened and read in a module's __init__, a tqdm bar kept on the
#: dataset, an argparse default of 0 workers, a decorator without functools.wraps, a
#: handle opened by a helper method of a reader object the dataset keeps, a connection
#: kept by a Storage object of a module beside the script
#: (the file patched, a line the patch adds), or None
PATCH_STATUS = {
    "dlw108_dataset_module.py": ("zip_shards.py", "+        self.archive = zipfile.ZipFile("
                                                  "self.data)\n"),
    "dlw108_tqdm_progress.py": ("dlw108_tqdm_progress.py", "+    def __getstate__(self):\n"),
    "dlw106_argparse_default.py": ("dlw106_argparse_default.py", "persistent_workers="
                                                                 "args.workers > 0)"),
    "dlw103_decorated_collate.py": ("dlw103_decorated_collate.py",
                                    "+    @functools.wraps(fn)\n"),
    "dlw108_zip_reader.py": ("dlw108_zip_reader.py", "+        self._open(self.data)  "
                                                     "# DLW108: reopened in each worker\n"),
    "dlw108_storage_module.py": ("row_storage.py", "+            self.conn = sqlite3.connect("
                                                   "self.path)\n")}


@pytest.mark.parametrize("name", sorted(PATCH_STATUS))
def test_the_default_run_says_its_patch_was_not_yet_run(name):
    """The recorded run, its diagnoses given their patches as the default run (no
    --verify) gives them: each patch made says, in the JSON (``verified`` null) and in
    the text, that no re-run proved it yet; the patch fixes the file the diagnosis
    names. A diagnosis without a patch says nothing of a re-run, and gives the fix in
    words."""
    from doctor.patches.workflow import propose
    from doctor.report import Terminal

    ((target, cwd, path),) = [c for c in recordings.cases() if c[2].name == name]
    recorded = recordings.load(path)
    here = os.getcwd()
    os.chdir(cwd)
    try:
        ev = evidence.from_json(recorded["evidence"])
        ev.static = static_findings(target[0], ev.start_method)
        diagnoses = diagnose(ev)
        propose(ev, diagnoses, ev.start_method)
        found = report_of(ev, diagnoses)["diagnoses"][0]
        text = Terminal(colour=False).render(ev, diagnoses)
    finally:
        os.chdir(here)
    assert found["code"] == expected(path)[0] and found["verified"] is None
    if PATCH_STATUS[name] is None:
        assert found["patch"] is None, found["patch"]
        assert "not yet run" not in text
        return
    patched, added = PATCH_STATUS[name]
    assert found["patch"] and "+++ b/%s\n" % patched in found["patch"], found
    assert added in found["patch"], found["patch"]
    assert "  patch (not yet run: use --verify):\n" in text, text


def test_recorded_workers_that_never_ask_for_their_share_are_dlw109():
    """dlw109_seeding_callable.py: the checker cannot tell what its worker_init_fn (an
    object) does; the run saw that no worker called get_worker_info() and that the
    worker_init_fn left the dataset as it was, and the loader counted the repeats."""
    path = find("dlw109_seeding_callable.py")
    status, report, _output = replay([path.name], path.parent, path)
    first = report["diagnoses"][0]
    assert (status, first["code"], first["line"], first["confidence"]) == (
        1, "DLW109", 33, "certain"), report["diagnoses"]
    assert "IterableDataset 'Lines' (__iter__ at dlw109_seeding_callable.py:17)" in \
        first["evidence"][0]
    assert "never called torch.utils.data.get_worker_info()" in first["evidence"][1]
    assert first["evidence"][2].startswith("2 of the 4 batches the loader compared repeated")


def test_streams_that_differ_are_not_dlw109():
    """Workers that never asked for their share, but whose batches the loader compared
    and found none repeated (a random stream): nothing to report; not compared: likely."""
    from flake8_dlworker.causes.DLW109.diagnosis import dlw109_stream

    def run(**loader):
        streams = [{"key": "k", "worker_id": i, "num_workers": 2, "asked": False,
                    "init_fn": False, "init_changed": None, "dataset": "Stream"}
                   for i in (0, 1)]
        return dlw109_stream(evidence.Evidence(
            streams=streams, loaders=[dict({"key": "k", "path": "t.py", "line": 9},
                                           **loader)]))

    assert run(counted=8, repeated=0) is None
    assert (run(counted=8, repeated=4).confidence, run(counted=8, repeated=4).line) == (
        "certain", 9)
    assert run(counted=None).confidence == "likely"
    assert "could not compare" in run(counted=None).evidence[-1]


def test_a_workers_name_error_for_a_name_the_guard_binds_is_dlw104_without_the_checker():
    """dlw104_guard_global.py's recorded run: the worker's NameError for ``vocab``,
    which the script's guard binds, is DLW104 at that binding, also where the checker
    said nothing (a dataset it could not follow); a NameError for a name the guard does
    not bind stays the dataset's own error (DLW205)."""
    path = find("dlw104_guard_global.py")
    recorded = recordings.load(path)
    here = os.getcwd()
    os.chdir(path.parent)
    try:
        ev = evidence.from_json(recorded["evidence"])
        ev.static = []
        first = diagnose(ev)[0]
        assert (first.code, first.line, first.confidence) == ("DLW104", 21, "certain")
        assert "where 'vocab' is bound" in first.evidence[-1], first.evidence
        for exc in ev.all_exceptions():
            exc.message = exc.message.replace("'vocab'", "'vocabulary'")
        assert diagnose(ev)[0].code == "DLW205"
    finally:
        os.chdir(here)
