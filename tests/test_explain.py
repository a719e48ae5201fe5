"""``python -m doctor explain`` on real-looking logs, through the real CLI in a subprocess.

Every file in tests/logs/ names its expected outcome before the double underscore:

- ``dlwNNN__...``: exit 1 and DLWNNN is the root cause (the first diagnosis);
- ``generic__...``: exit 1, the log holds only a generic symptom, so the likely causes
  are listed, every one ``possible``, with the command to run next;
- ``none__...``: exit 0, no diagnosis (no DataLoader failure in the log).

EXTRA holds what some logs must also show (the user's frame, confidence, evidence, and
for a distributed job's log the rank whose failure came first).
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

import needs
from tiers import run_python

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGS = os.path.join(ROOT, "tests", "logs")
ALL_LOGS = sorted(f for f in os.listdir(LOGS) if f.endswith(".log"))


def explain(*args, stdin=None, cwd=ROOT, **kwargs):
    return subprocess.run([sys.executable, "-m", "doctor", "explain", *args],
                          cwd=cwd, input=stdin, capture_output=True, timeout=120, **kwargs)


def expected(name):
    return name.split("__", 1)[0]


#: name -> {field: value}; "evidence" is a substring some evidence line must contain
EXTRA = {
    "dlw102__linux_py314_forkserver_picklingerror_notes.log": {
        "path": "/srv/app/train.py", "line": 63,
        "evidence": "reached from collate_fn (item 6 of the worker's arguments)"},
    "dlw103__linux_py314_local_class.log": {
        "evidence": "reached from the dataset (item 1 of the worker's arguments)"},
    "dlw102__user_file_exists_here_static_sharpens.log": {
        "path": "flake8_dlworker/causes/DLW102/invalid/dlw102_collate.py", "line": 8,
        "confidence": "certain",
        "patch": "+def _collate(b):"},
    "dlw101__win_py38_bootstrap_then_brokenpipe.log": {
        "path": "D:\\work\\cifar\\cifar10_tutorial.py", "line": 53, "confidence": "certain"},
    "dlw101__linux_py311_spawn_rank_prefix_exit_code1.log": {
        "path": "/workspace/ddp_train.py", "line": 64},
    "dlw101__macos_py313_ansi_colour.log": {"path": "/Users/jo/dev/vae/train_vae.py"},
    "dlw104__linux_py311_mp_main_exit_code1.log": {"path": "/home/ana/proj/train.py"},
    "dlw205__linux_keyerror_worker1_timestamps.log": {
        "path": "/home/sam/asr/data.py", "line": 57,
        "evidence": "worker 1 raised KeyError: 'spk_0412'"},
    "dlw205__linux_torch10_reraised_worker_traceback.log": {
        "path": "/home/yu/proj/cub/datasets.py", "line": 44},
    "dlw205__win_tqdm_bar_glued_to_traceback.log": {
        "path": "C:\\Users\\Ama\\yolo\\utils\\datasets.py", "line": 412,
        "evidence": "worker 3 raised FileNotFoundError"},
    "dlw205__linux_truncated_inside_original_traceback.log": {
        "path": "/home/sam/asr/data.py", "evidence": "cut short"},
    "dlw205__multi_crash_first_specific_wins.log": {
        "evidence": "the log holds 2 crashes", "also": "DLW201"},
    "dlw202__multi_generic_then_bus_error.log": {"evidence": "the log holds 2 crashes"},
    "dlw202__linux_docker_bus_error_nul.log": {"path": "/home/ana/proj/train.py", "line": 41},
    "dlw209__win_py37_overflowerror_4gib_then_eoferror.log": {
        "path": "train.py", "line": 141, "confidence": "certain",
        "evidence": "raised while the parent pickled a worker's arguments"},
    "dlw209__linux_py312_memoryerror_pickling_worker_args.log": {
        "path": "/home/kim/seg/train.py", "line": 88, "confidence": "certain",
        "evidence": "raised while the parent pickled a worker's arguments"},
    "dlw201__linux_slurm_oom_killed.log": {
        "confidence": "certain", "evidence": "oom_kill event"},
    "dlw207__win_1455_cudnn_eight_workers.log": {
        "evidence": "8 workers + the main process = 9 x 1.0-2.0 GB = 9-18 GB"},
    "dlw207__win_1455_chinese_utf16_powershell.log": {
        "evidence": "loading caffe2_detectron_ops_gpu.dll"},
    "dlw107__linux_cuda_forked_worker.log": {
        "path": "/home/ana/proj/gpu_aug.py", "line": 21, "confidence": "certain"},
    "dlw102__ddp_two_ranks_same_crash.log": {"count": 1},
    "dlw105__win_torch17_persistent_workers_pin_memory_bug.log": {
        "path": "C:\\Users\\Ida\\unet\\train.py", "line": 77,
        "evidence": "torch 1.7's persistent_workers + pin_memory bug"},
    "dlw105__linux_pin_memory_thread_cuda_oom.log": {
        "confidence": "likely", "evidence": "CUDA error: out of memory"},
    "dlw206__linux_py312_fork_after_threads_timeout.log": {
        "path": "/home/ana/nlp/finetune.py", "line": 95,
        "evidence": "forked from a process that already ran threads"},
    "generic__win_jupyter_cell_exited_unexpectedly.log": {"also": "DLW207"},
    "generic__linux_exited_unexpectedly_exit_code_only.log": {
        "evidence": "python -m doctor /home/ana/proj/train.py"},
    # hangs read from stacks: the blocking frame, and who waits
    "dlw206__linux_pyspy_worker_idle_in_dataset_lock.log": {
        "confidence": "likely",
        "evidence": "the stack of the stuck worker (it waits in __getitem__, "
                    "datasets/shards.py:88)"},
    "dlw206__linux_pyspy_full_filenames_worker_queue_put.log": {
        "evidence": "it waits in wait, /usr/lib/python3.11/threading.py:320, called through "
                    "put, /usr/lib/python3.11/multiprocessing/queues.py:91, from the user's "
                    "code at /home/ana/proj/prefetch.py:57"},
    "dlw206__linux_faulthandler_watchdog_in_worker_cuda_sync.log": {
        "evidence": "faulthandler's watchdog shows the DataLoader's worker waiting"},
    "dlw206__linux_pyspy_pin_memory_thread_stuck.log": {
        "evidence": "the stack of the stuck pin memory thread (it waits in pin_memory"},
    "dlw206__linux_py312_fork_after_threads_logging_lock.log": {
        "evidence": "ran other threads: 'Thread-1 (_flush_loop)'"},
    "dlw206__linux_py38_torch18_watchdog_main_waits_for_batch.log": {
        "evidence": "main process (waiting for a batch)"},
    "dlw206__win_conda_dataloader_timed_out_worker_stack.log": {"confidence": "certain"},
    "dlw108__linux_py310_feeder_thread_unpicklable_sample_then_timeout.log": {
        "evidence": "its queue's feeder thread failed to send it"},
    "dlw108__win_py312_feeder_thread_cannot_pickle_generator_ctrl_c.log": {
        "evidence": "printed by a queue feeder thread process"},
    "dlw102__win_pytest_lambda_buried_under_report.log": {
        "evidence": "Can't pickle local object 'make_loader.<locals>.<lambda>'"},
    "dlw107__torchrun_rank1_cuda_error_out_of_memory_worker.log": {
        "evidence": "(raised in worker 3)"},
    # distributed jobs: the first failure across ranks, the others' symptoms folded in
    "dlw201__torchrun_linux_py311_rank1_worker_killed_rank0_gloo_closed.log": {
        "rank": 1, "evidence": "rank 1 failed first: the elastic agent's summary names it"},
    "dlw201__torchrun_redirects_only_error_file_traceback.log": {
        "rank": 1, "evidence": "rank 0: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo"},
    "dlw201__torchrun_record_rank_output_and_error_file.log": {
        "rank": 1, "evidence": "rank 0 ended with exitcode -15 (SIGTERM)"},
    "dlw201__torchrun_fd_sharing_rank1_exited_unexpectedly_chain.log": {
        "rank": 1, "evidence": "Sending process 20013 closing signal SIGTERM"},
    "dlw201__torchrun_two_nodes_node1_rank1_worker_killed.log": {"rank": 1, "count": 1},
    "dlw201__torchrun_two_nodes_concatenated_node0_first.log": {
        "rank": 1, "evidence": "(time 2026-12-07_12:12:52, host localhost, exitcode 1)"},
    "dlw201__mp_spawn_linux_process_1_worker_killed.log": {
        "rank": 1, "evidence": "ProcessRaisedException (what followed from rank 1's failure)"},
    "dlw205__mp_spawn_linux_py311_process_1_keyerror_in_worker.log": {
        "rank": 1, "evidence": "worker 1 raised KeyError: 'sample_5'"},
    "dlw201__slurm_srun_label_rank1_oom_kill_event.log": {
        "rank": 1, "confidence": "certain", "evidence": "oom_kill event"},
    "dlw201__slurm_srun_label_interleaved_ranks_killed.log": {
        "rank": 1, "evidence": "rank 0: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo"},
    "dlw202__slurm_srun_nccl_watchdog_after_rank1_bus_error.log": {
        "rank": 1, "evidence": "[Rank 0] Watchdog caught collective operation timeout"},
    "dlw205__lightning_ddp_spawn_linux_process_1_keyerror_in_worker.log": {
        "rank": 1, "evidence": "worker 0 raised KeyError: 'spk_1187'"},
    "dlw205__lightning_ddp_linux_rank1_indexerror_rank0_gloo_read_error.log": {
        "rank": 1, "evidence": "Read error [127.0.0.1]:14512: Connection reset by peer"},
    "dlw102__win_mp_spawn_gloo_process_1_cant_pickle_local_lambda.log": {"rank": 1},
    "dlw205__win_torchrun_gloo_uv_rank1_filenotfound_rank0_recv_timeout.log": {
        "rank": 1, "evidence": "Timed out waiting 1800000ms for recv operation to complete"},
    "generic__torchrun_rank1_rebuild_storage_fd_connection_reset.log": {"rank": 1},
    "dlw205__slurm_srun_rank0_workers_terminated_before_rank1_keyerror.log": {
        "rank": 1, "evidence": "rank 0: RuntimeError: DataLoader worker (pid 90417) is killed "
                               "by signal: Terminated. (what followed from rank 1's failure)"},
}


def _locations():
    found = {}
    with open(os.path.join(LOGS, "locations.tsv"), encoding="utf-8") as handle:
        for line in handle:
            if line.strip() and not line.startswith("#"):
                name, where = line.rstrip("\n").split("\t")
                found[name] = where
    return found


LOCATIONS = _locations()


def test_enough_logs_across_platforms_and_outcomes():
    assert len(ALL_LOGS) >= 100
    kinds = {expected(n) for n in ALL_LOGS}
    assert {"none", "generic"} <= kinds
    assert len([k for k in kinds if k.startswith("dlw")]) >= 14
    for platform in ("win", "linux", "macos", "jupyter", "pytest", "pyspy", "faulthandler",
                     "torchrun", "k8s", "docker", "py38", "py314", "torch1", "mp_spawn",
                     "slurm", "lightning_ddp"):
        assert any("_%s_" % platform in n or "__%s" % platform in n for n in ALL_LOGS), platform
    assert set(EXTRA) <= set(ALL_LOGS)
    assert sorted(LOCATIONS) == ALL_LOGS  # every log says where its user frame is, or "-"


@pytest.mark.parametrize("name", ALL_LOGS)
def test_log(name):
    result = explain("--json", os.path.join("tests", "logs", name))
    assert result.stderr.decode("utf-8", "replace").count("Traceback") == 0, result.stderr
    report = json.loads(result.stdout)
    diagnoses = report["diagnoses"]
    codes = [d["code"] for d in diagnoses]
    want = expected(name)
    if want == "none":
        assert result.returncode == 0, codes
        assert diagnoses == []
        return
    assert result.returncode == 1, result.stderr
    assert diagnoses, "no diagnosis"
    if want == "generic":
        assert len(diagnoses) >= 5
        for diag in diagnoses:
            assert diag["confidence"] == "possible"
            assert any("only the generic symptom" in e for e in diag["evidence"])
            assert any("python -m doctor " in e for e in diag["evidence"])
    else:
        assert codes[0] == want.upper(), codes
    extra = EXTRA.get(name, {})
    root = diagnoses[0]
    if LOCATIONS[name] != "-":
        path, line = LOCATIONS[name].rsplit(":", 1)
        assert (root["path"], root["line"]) == (path, int(line)), (root["path"], root["line"])
    for field in ("path", "line", "confidence", "rank"):
        if field in extra:
            assert root.get(field) == extra[field], (field, root.get(field))
    if "rank" in extra:  # every diagnosis of a rank's crash names it
        assert all(d.get("rank") is not None for d in diagnoses if d["path"]), diagnoses
    if "evidence" in extra:
        assert any(extra["evidence"] in e for e in root["evidence"]), root["evidence"]
    if "also" in extra:
        assert extra["also"] in codes[1:], codes
    if "patch" in extra:
        assert extra["patch"] in (root["patch"] or ""), root["patch"]
    else:
        assert root["patch"] is None  # no file of these logs exists here
    if "count" in extra:
        assert len(diagnoses) == extra["count"], codes


def test_terminal_report_names_root_cause_and_says_how_many_crashes():
    result = explain(os.path.join("tests", "logs", "dlw205__multi_crash_first_specific_wins.log"))
    out = result.stdout.decode()
    assert result.returncode == 1
    assert "DLW205" in out and "[root cause, certain]" in out
    assert "DLW201" in out and "also found" in out
    assert "the log holds 2 crashes" in out


def test_negative_says_so_in_words():
    result = explain(os.path.join("tests", "logs", "none__linux_zerodivision_in_metrics.log"))
    out = result.stdout.decode()
    assert result.returncode == 0
    assert "No DataLoader worker problem found." in out
    assert "not a DataLoader failure: ZeroDivisionError: division by zero" in out


def test_stdin_dash():
    with open(os.path.join(LOGS, "dlw108__linux_py311_textiowrapper.log"), "rb") as handle:
        data = handle.read()
    result = explain("--json", "-", stdin=data)
    assert result.returncode == 1
    assert json.loads(result.stdout)["diagnoses"][0]["code"] == "DLW108"


def test_runs_nothing_from_the_log(tmp_path):
    """A log that names a script and a command: explain reads, never executes."""
    marker = tmp_path / "ran"
    script = tmp_path / "evil.py"
    script.write_text("open(%r, 'w').write('x')\n" % str(marker))
    log = tmp_path / "crash.log"
    log.write_text("$ python %s\nTraceback (most recent call last):\n"
                   '  File "%s", line 1, in <module>\n'
                   "    open(...)\nRuntimeError: DataLoader worker (pid(s) 1) exited unexpectedly\n"
                   % (script, script))
    result = explain(str(log))
    assert result.returncode == 1
    assert not marker.exists()


# -- bad input: one line on stderr, exit 2, nothing on stdout ----------------------------

def _bad(result, words):
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2, (result.returncode, err)
    assert result.stdout == b""
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert words in err, err


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_missing_file(tmp_path, json_flag):
    _bad(explain(*json_flag, str(tmp_path / "nope.log")), "no such file")


def test_empty_file(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    _bad(explain(str(empty)), "the log is empty")
    blank = tmp_path / "blank.log"
    blank.write_bytes(b"\r\n  \n\t\n")
    _bad(explain(str(blank)), "the log is empty")


def test_empty_stdin():
    _bad(explain("-", stdin=b""), "the log is empty")


@pytest.mark.parametrize("data", [
    bytes(range(256)) * 64,                                        # arbitrary bytes
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(4000),         # an image
    b"\x1f\x8b\x08\x00" + bytes(range(1, 32)) * 200,               # a gzipped log
    b"\x7fELF\x02\x01\x01" + bytes(3000),                          # an executable
], ids=["random", "png", "gzip", "elf"])
def test_binary_file(tmp_path, data):
    path = tmp_path / "crash.log"
    path.write_bytes(data)
    _bad(explain(str(path)), "binary")


def test_directory(tmp_path):
    _bad(explain(str(tmp_path)), "is a directory")


def test_unreadable_by_permissions(tmp_path):
    """chmod 000.  Root reads anything through CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH, so as
    root the CLI runs with those two capabilities dropped (setpriv), as an ordinary user
    would; without setpriv the test cannot make the file unreadable and says so."""
    path = tmp_path / "secret.log"
    path.write_text("RuntimeError: DataLoader worker (pid(s) 1) exited unexpectedly\n")
    path.chmod(0)
    command = [sys.executable, "-m", "doctor", "explain", str(path)]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root and no setpriv to drop CAP_DAC_OVERRIDE")
        caps = "-dac_override,-dac_read_search"
        command = [setpriv, "--inh-caps=" + caps, "--bounding-set=" + caps] + command
    result = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=120)
    _bad(result, "cannot read: Permission denied")


def test_read_error_after_open():
    """A file that opens but fails to read (EIO): /proc/self/mem at offset 0."""
    if not os.path.exists("/proc/self/mem"):
        pytest.skip("no /proc here")
    _bad(explain("/proc/self/mem"), "cannot read")


def test_not_a_regular_file():
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null here")
    _bad(explain("/dev/null"), "not a regular file")


def test_bad_usage():
    result = subprocess.run([sys.executable, "-m", "doctor", "explain"], cwd=ROOT,
                            capture_output=True, timeout=60)
    assert result.returncode == 2
    assert len(result.stderr.decode().strip().splitlines()) == 1


# -- real output: crash a reproducer here, save what it printed, explain the file --------

REAL = [("flake8_dlworker/causes/DLW202/invalid/dlw202_sigbus.py", False),
        ("flake8_dlworker/causes/DLW205/invalid/dlw205_raise.py", False),
        ("flake8_dlworker/causes/DLW101/invalid/dlw101_loop.py", True),
        ("flake8_dlworker/causes/DLW104/invalid/dlw104_guard_dataset.py", True)]


@needs.torch
@pytest.mark.parametrize("script,spawn", REAL, ids=[os.path.basename(s) for s, _ in REAL])
def test_real_crash_output(tmp_path, script, spawn):
    """What this machine's torch really prints, not a written log: the same root cause
    and, since the script exists here, its line from the static checker or the frame."""
    runner = [os.path.join("tests", "spawn_run.py")] if spawn else []
    crashed = run_python([*runner, script], cwd=ROOT, capture_output=True, timeout=300)
    assert crashed.returncode != 0
    log = tmp_path / "crash.log"
    log.write_bytes(crashed.stdout + crashed.stderr)
    result = explain("--json", str(log))
    assert result.returncode == 1, result.stderr
    root = json.loads(result.stdout)["diagnoses"][0]
    assert root["code"] == os.path.basename(script).split("_", 1)[0].upper()
    assert root["path"] == script
    assert isinstance(root["line"], int)


# -- a distributed job: several logs, the first failure across ranks and nodes -----------

NODE0 = os.path.join("tests", "logs", "none__torchrun_two_nodes_node0_only_peer_closed.log")
NODE1 = os.path.join("tests", "logs", "dlw201__torchrun_two_nodes_node1_rank1_worker_killed.log")


@pytest.mark.parametrize("order", [(NODE0, NODE1), (NODE1, NODE0)],
                         ids=["node0-first", "node1-first"])
def test_several_logs_name_the_first_failure_with_node_and_rank(order):
    """Two torchrun agents' logs (--nnodes 2, recorded here): node 1's rank 1 lost a worker,
    node 0's rank 0 only lost its peer; whichever log comes first, the root cause is
    node 1's, and node 0's symptoms and its agent's later "Root Cause" are folded in."""
    result = explain("--json", *order)
    assert result.returncode == 1, result.stderr
    diagnoses = json.loads(result.stdout)["diagnoses"]
    assert len(diagnoses) == 1
    root = diagnoses[0]
    assert (root["code"], root["rank"], root["node"]) == ("DLW201", 1, os.path.basename(NODE1))
    assert (root["path"], root["line"]) == ("/home/ana/ddp/train_ddp.py", 31)
    evidence = "\n".join(root["evidence"])
    assert "rank 1 failed first" in evidence
    assert "rank 0: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo" in evidence
    assert "names rank 0 first on that node, at 2026-12-07_12:12:54" in evidence
    text = explain(*order).stdout.decode()
    assert "train_ddp.py:31 (node %s, rank 1)" % os.path.basename(NODE1) in text


def test_symptoms_alone_say_the_cause_is_in_another_log():
    """Only node 0's log: its rank shows only what followed (gloo lost its peer), so
    nothing is diagnosed, and the note says where the cause is, not ChildFailedError."""
    result = explain(NODE0)
    out = result.stdout.decode()
    assert result.returncode == 0
    assert "only what follows a failure elsewhere (rank 0: RuntimeError:" in out
    assert "in another log" in out
    assert "ChildFailedError" not in out


def test_spawn_rank_killed_is_named_not_the_launcher_exception():
    result = explain(os.path.join("tests", "logs",
                                  "none__mp_spawn_process_1_terminated_with_signal_sigkill.log"))
    out = result.stdout.decode()
    assert result.returncode == 0
    assert "mp.spawn's rank 1 terminated with signal SIGKILL" in out


def test_text_report_says_the_rank():
    result = explain(os.path.join(
        "tests", "logs", "dlw205__mp_spawn_linux_py311_process_1_keyerror_in_worker.log"))
    out = result.stdout.decode()
    assert result.returncode == 1
    assert "spawn_ddp.py:25 (rank 1)" in out


def test_several_logs_one_missing(tmp_path):
    _bad(explain(NODE0, str(tmp_path / "node1.log")), "no such file")


def test_several_logs_one_empty(tmp_path):
    empty = tmp_path / "node1.log"
    empty.write_bytes(b"")
    _bad(explain(NODE0, str(empty)), "the log is empty")


def test_stdin_twice():
    _bad(explain("-", "-", stdin=b"x\n"), "standard input can be read once")


def _timed_log(rank, stamp, error, where):
    lines = ["Traceback (most recent call last):",
             '  File "/home/u/train.py", line 9, in <module>', "    for batch in loader:",
             '  File "/home/u/.venv/lib/python3.11/site-packages/torch/_utils.py", '
             'line 694, in reraise', "    raise exception",
             "%s: Caught %s in DataLoader worker process 0." % (error, error),
             "Original Traceback (most recent call last):",
             '  File "/home/u/data.py", line %d, in __getitem__' % where, "    x = f(i)",
             "%s: 'bad sample'" % error]
    return "".join("2026-12-07 %s,%03d - [rank%d]: %s\n" % (stamp, 100 + i, rank, line)
                   for i, line in enumerate(lines))


def test_without_a_summary_the_earliest_stamped_failure_is_the_root(tmp_path):
    """Two nodes' logs with the logging module's timestamps and no elastic summary: the
    failure printed first in time is the root cause, whichever log is named first; the
    later one is folded in as a failure of its own, not as a symptom."""
    late, early = tmp_path / "a.log", tmp_path / "b.log"
    late.write_text(_timed_log(0, "10:05:01", "ValueError", 12))
    early.write_text(_timed_log(1, "10:04:59", "KeyError", 30))
    for order in ((late, early), (early, late)):
        result = explain("--json", *map(str, order))
        assert result.returncode == 1, result.stderr
        root = json.loads(result.stdout)["diagnoses"][0]
        assert (root["code"], root["rank"], root["node"], root["line"]) == (
            "DLW205", 1, "b.log", 30)
        assert "the earliest by the times the log prints (12-07 10:04:59.100)" in \
            root["evidence"][0]
        assert any(e.startswith("node a.log, rank 0 also failed") for e in root["evidence"])


@needs.torch
def test_real_torchrun_output(tmp_path):
    """What torchrun really prints here (2 gloo ranks, a worker of rank 1 killed while rank
    0 waits in all_reduce): rank 1's worker is the root cause, rank 0's lost peer and the
    agent's ChildFailedError its evidence."""
    script = os.path.join("tests", "ddp_worker_killed.py")
    crashed = run_python(["-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
                          "2", script], cwd=ROOT, capture_output=True, timeout=300)
    assert crashed.returncode != 0
    log = tmp_path / "torchrun.log"
    log.write_bytes(crashed.stdout + crashed.stderr)
    result = explain("--json", str(log))
    assert result.returncode == 1, result.stderr
    root = json.loads(result.stdout)["diagnoses"][0]
    assert (root["code"], root["rank"], root["path"]) == ("DLW201", 1, script), root
    assert any("ChildFailedError" in e for e in root["evidence"]), root["evidence"]


def test_the_first_failure_by_time_is_found_over_new_year():
    """glog and logging stamps print no year: a rank that failed at 23:59 on 31
    December failed before one that failed at 00:01 on 1 January, the next year."""
    from doctor.distributed import _earliest
    from doctor.logparse import chronological, when

    late = when("E1231 23:59:58.100000 7 torch/utils/data/dataloader.py:1] ")
    early = when("E0101 00:00:01.000000 7 torch/utils/data/dataloader.py:1] ")
    assert (late, early) == ("12-31 23:59:58.100000", "01-01 00:00:01.000000")
    assert sorted([early, late], key=chronological([early, late])) == [late, early]
    rank0, rank1 = {"time": early, "rank": 0}, {"time": late, "rank": 1}
    assert _earliest([(rank0, ["a"]), (rank1, ["b"])])[0] is rank1
    within = [when("E0301 10:00:00.0 7 x.py:1] "), when("E0228 09:00:00.0 7 x.py:1] ")]
    assert sorted(within, key=chronological(within)) == within[::-1]
