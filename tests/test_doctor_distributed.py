"""The doctor on distributed runs: a launcher run as the user would (``torchrun``,
``python -m torch.distributed.run``) with every rank and every rank's workers watched
through the run's startup hook, ``mp.spawn`` ranks hooked under a plain run, the rank of
the root cause, and nothing left running, also when the doctor is ended by a signal.

The fixtures themselves (``fixtures/distributed/``) run for real in
``tests/test_doctor_fixtures.py`` and are replayed from their recordings here."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import uuid

import pytest

import needs
import recordings
from doctor import launchers
from doctor.agent import EVENTS, RANK
from doctor.process_tree import TOKEN as RUN_TOKEN
from doctor_run import doctor_command, leftovers, run_doctor
from fixture_markers import CAUSES, DISTRIBUTED, LAUNCHER
from test_doctor_fixtures import replay
from test_doctor_hardening import Doctor
from tiers import run_python

pytestmark = needs.posix


# -- the launcher's command line --------------------------------------------------------

@pytest.mark.parametrize("target, found", [
    (["torchrun", "--nproc-per-node", "2", "train.py", "--epochs", "1"], ("script", "train.py")),
    (["torchrun", "--nproc_per_node=2", "--standalone", "train.py"], ("script", "train.py")),
    (["/opt/venv/bin/torchrun", "--nnodes", "2", "--node-rank", "1", "--rdzv-endpoint",
      "127.0.0.1:29400", "train.py"], ("script", "train.py")),
    (["-m", "torch.distributed.run", "--nproc-per-node", "2", "-m", "pkg.train"],
     ("module", "pkg.train")),
    (["-m", "torch.distributed.run", "--no-python", "--nproc-per-node", "2", "./run.sh"],
     ("program", "./run.sh")),
    (["-m", "torch.distributed.launch", "--use-env", "train.py"], ("script", "train.py")),
    (["torchrun", "--", "train.py"], ("script", "train.py")),
])
def test_the_launchers_arguments_name_the_script_each_rank_runs(target, found):
    assert launchers.is_launcher(target)
    assert launchers.script_of(target) == found


@pytest.mark.parametrize("target", [["train.py"], ["-m", "torch.distributed"], ["torchrun.py"],
                                    ["-m", "pkg.train"]])
def test_a_script_or_module_is_no_launcher(target):
    assert not launchers.is_launcher(target)


def _torch_flags():
    """The options of torch's launcher that take no value, read from its source with
    ``ast`` (nothing of torch is imported): ``action=check_env`` or ``"store_true"``."""
    import ast
    import importlib.util

    source = os.path.join(os.path.dirname(importlib.util.find_spec("torch").origin),
                          "distributed", "run.py")
    with open(source, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    flags = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument"):
            continue
        action = next((k.value for k in node.keywords if k.arg == "action"), None)
        if (isinstance(action, ast.Name) and action.id == "check_env") or (
                isinstance(action, ast.Constant) and action.value in ("store_true",
                                                                      "store_false")):
            flags.update(a.value for a in node.args if isinstance(a, ast.Constant))
    return flags


def test_the_launchers_options_without_a_value_are_torchs():
    """The options that take no value are those of torch's own parser: any other option
    takes the next argument, so the script is found where torch finds it."""
    flags = _torch_flags() | {"-h", "--help"}
    assert "--standalone" in flags
    assert flags <= launchers.FLAGS
    assert launchers.FLAGS - flags <= {"--use-env", "--use_env"}  # torch.distributed.launch


@pytest.mark.parametrize("args, says", [
    (["torchrun", "--nproc-per-node", "2"], "give the launcher a script to run"),
    (["--verify", "torchrun", "train.py"], "--verify re-runs a script"),
    (["--compare", "-m", "torch.distributed.run", "train.py"], "--compare re-runs a script"),
    (["-m", "torch.distributed.run", "--no-python", "train.py"], "--no-python"),
    (["-m", "torch.distributed.run", "missing.py"], "missing.py: no such file"),
])
def test_a_launcher_command_the_doctor_cannot_run_is_one_line_exit_2(tmp_path, args, says):
    (tmp_path / "train.py").write_text("print('hi')\n")
    status, _report, out, err, _left = doctor_command(args, tmp_path)
    assert status == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert out == ""


def test_a_launcher_not_on_path_is_one_line_exit_2(tmp_path):
    (tmp_path / "train.py").write_text("print('hi')\n")
    status, _report, _out, err, _left = doctor_command(
        ["torchrun", "train.py"], tmp_path, env={"PATH": str(tmp_path)})
    assert status == 2 and "torchrun: not found on PATH" in err, err


# -- the startup hook -------------------------------------------------------------------

USER_SITECUSTOMIZE = "import os\nos.environ['USER_SITE_RAN'] = 'yes'\n"
SHOW = ("import json, os, sys; print(json.dumps([os.environ.get('USER_SITE_RAN'), "
        "os.environ.get(%r), 'torch' in sys.modules]))" % RANK)


def _interpreter(tmp_path, token, args=(), **env):
    """(what a fresh interpreter of a launcher's run printed, the events it wrote), its
    environment carrying the run's hook and ``token``."""
    user = tmp_path / "user"
    user.mkdir(exist_ok=True)
    (user / "sitecustomize.py").write_text(USER_SITECUSTOMIZE)
    folder = tempfile.mkdtemp(dir=tmp_path)
    events = os.path.join(folder, "events.jsonl")
    base = {k: v for k, v in os.environ.items()
            if k not in ("LOCAL_RANK", "RANK", "GROUP_RANK", RANK)}
    base.update(PYTHONPATH=os.pathsep.join([str(user), os.environ.get("PYTHONPATH", "")]))
    base[EVENTS] = events
    base[RUN_TOKEN] = token
    full = launchers.startup_env(folder, "the-run", base)
    full.update(env)  # what the launcher gives its rank
    proc = subprocess.run([sys.executable, "-c", SHOW, *args], env=full, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    try:
        with open(events) as handle:
            written = [json.loads(line) for line in handle]
    except FileNotFoundError:
        written = []
    return json.loads(proc.stdout), written


def test_the_hook_makes_a_rank_of_the_run_a_main_process_labelled_with_its_rank(tmp_path):
    shown, events = _interpreter(tmp_path, "the-run", LOCAL_RANK="1", RANK="3",
                                 GROUP_RANK="1")
    user_ran, label, torch_loaded = shown
    assert user_ran == "yes"  # the user's own sitecustomize still runs
    assert json.loads(label)["rank"] == 3
    assert not torch_loaded  # hooked when the script imports it, not before
    (start,) = [e for e in events if e["event"] == "main_start"]
    assert (start["rank"], start["local_rank"], start["node"]) == (3, 1, 1)


@pytest.mark.parametrize("token, env, args", [
    ("another-run", {"LOCAL_RANK": "0", "RANK": "0"}, ()),  # not this run's token
    ("the-run", {}, ()),  # the launcher itself: no rank
    ("the-run", {"LOCAL_RANK": "0", "RANK": "0", RANK: '{"rank": 0}'}, ()),  # a rank's worker
    # a worker of Lightning's rank 0, the script's main process, which is not labelled
    ("the-run", {"LOCAL_RANK": "0"}, ("--multiprocessing-fork",)),
])
def test_the_hook_does_nothing_outside_a_ranks_main_process(tmp_path, token, env, args):
    shown, events = _interpreter(tmp_path, token, args, **env)
    assert shown[0] == "yes"
    assert events == []


# -- the fixtures' recorded runs --------------------------------------------------------

@pytest.mark.parametrize("name", ["dlw201_rank_all_reduce.py", "dlw201_spawn_all_reduce.py"])
def test_the_root_cause_names_the_rank_it_happened_in(name):
    """Rank 1's worker is killed while rank 0 waits in all_reduce: the root cause is in
    rank 1, and what rank 0 and the launcher showed is its evidence, not a cause."""
    path = DISTRIBUTED / name
    target = LAUNCHER + [name] if name.startswith("dlw201_rank") else [name]
    status, report, _output = replay(target, DISTRIBUTED, path)
    first = report["diagnoses"][0]
    assert (status, first["code"], first["rank"]) == (1, "DLW201", 1), report["diagnoses"]
    assert "node" not in first  # one node
    evidence = "\n".join(first["evidence"])
    assert "worker 0 of rank 1" in evidence and "rank 1 failed first, of 2" in evidence
    assert "rank 0 " in evidence
    assert [d["code"] for d in report["diagnoses"]] == ["DLW201"]


def test_the_workers_of_every_rank_together_above_the_cpus_are_named_with_the_figure():
    """Each rank starts as many workers as the host has usable CPUs: torch checks each
    rank alone and does not warn; the doctor adds up the ranks of the node (DLW110), in
    a run that passes, with no rank said to have failed."""
    name = "dlw110_rank_workers.py"
    status, report, output = replay(LAUNCHER + [name], DISTRIBUTED, DISTRIBUTED / name)
    first = report["diagnoses"][0]
    assert (status, report["outcome"], first["code"], first["rank"], first["line"]) == (
        1, "passed", "DLW110", 0, 34), report["diagnoses"]
    cpus = report["host"]["cpus"]
    figure = "2 ranks x %d workers = %d worker processes on %d usable CPUs" % (
        cpus, 2 * cpus, cpus)
    assert first["evidence"][0] == figure, first["evidence"]
    assert not any("fail" in line for line in first["evidence"]), first["evidence"]
    assert "will create" not in output  # torch said nothing
    assert first["patch"] is None


def test_the_ranks_total_is_counted_per_node_against_the_usable_cpus():
    from doctor.diagnose import diagnose
    from doctor.evidence import Evidence

    def loader(rank, workers, node=0, pids=True):
        return {"key": "k%d" % rank, "path": "train.py", "line": 9, "rank": rank,
                "node": node, "num_workers": workers, "pids": [1] * workers if pids else []}

    def first(loaders, cpus=4):
        ev = Evidence(outcome="passed", loaders=loaders, host={"cpus": cpus},
                      ranks=[{"rank": one["rank"], "node": one["node"], "pid": n}
                             for n, one in enumerate(loaders)])
        found = diagnose(ev)
        return found[0].evidence[0] if found else None

    assert first([loader(0, 2), loader(1, 2)]) is None  # 4 on 4 CPUs
    assert first([loader(0, 2), loader(1, 3)]) == (
        "2 ranks with 2 + 3 workers = 5 worker processes on 4 usable CPUs")
    assert first([loader(0, 3), loader(1, 3, node=1)]) is None  # one rank on each node
    assert first([loader(0, 3), loader(1, 3, pids=False)]) is None  # rank 1 started none


def test_a_distributed_sampler_never_told_the_epoch_is_named_in_each_rank():
    name = "dlw112_rank_set_epoch.py"
    status, report, _output = replay(LAUNCHER + [name], DISTRIBUTED, DISTRIBUTED / name)
    first = report["diagnoses"][0]
    assert (status, report["outcome"], first["code"], first["rank"], first["line"]) == (
        1, "passed", "DLW112", 0, 27), report["diagnoses"]
    evidence = "\n".join(first["evidence"])
    assert "with the sampler's epoch still 0" in evidence
    assert "ranks 0, 1 each repeated their first epoch's order" in evidence


def test_every_rank_and_worker_of_a_launched_run_is_labelled():
    data = recordings.load(DISTRIBUTED / "clean_ddp.py")
    evidence = data["evidence"]
    assert sorted(r["rank"] for r in evidence["ranks"]) == [0, 1]
    assert {r["node"] for r in evidence["ranks"]} == {0}
    workers = sorted(w["rank"] for w in evidence["workers"])  # its share of the CPUs each
    assert set(workers) == {0, 1} and workers.count(0) == workers.count(1), workers
    assert sorted(loader["rank"] for loader in evidence["loaders"]) == [0, 1]
    assert evidence["hints"]["launcher"] == " ".join(["python"] + LAUNCHER)


def test_the_memory_chart_names_each_ranks_main_process_and_workers():
    from doctor.evidence import WorkerExit
    from doctor.memory_chart import _role
    from doctor.supervisor import _rank_places

    memory = {"processes": [{"pid": pid, "role": role} for pid, role in [
        (10, "main"), (11, "worker 0"), (20, "process"), (21, "worker 0"), (5, "launcher")]]}
    _rank_places(memory, [{"pid": 10, "rank": 0}, {"pid": 20, "rank": 1}],
                 [WorkerExit(pid=11, rank=0), WorkerExit(pid=21, rank=1)])
    assert [_role(p) for p in memory["processes"]] == [
        "rank 0 (pid 10)", "rank 1 (pid 20)", "worker 0 of rank 0 (pid 11)",
        "worker 0 of rank 1 (pid 21)", "launcher (pid 5)"]


# -- Lightning's ddp: ranks the script starts again -------------------------------------

def test_lightning_ddp_makes_each_ranks_loader_as_it_does_without_the_doctor():
    """Lightning's ddp re-makes the script's loader in every rank with a
    DistributedSampler, from the parameters it reads on DataLoader.__init__'s signature:
    each rank runs two batches of four, the ranks stay in step, nothing is diagnosed
    (the doctor's loader hook once hid that signature: rank 0 ran eight batches of one
    and lost its peer when rank 1 had finished)."""
    path = DISTRIBUTED / "clean_lightning_ddp.py"
    status, report, output = replay([path.name], DISTRIBUTED, path)
    assert (status, report["outcome"], report["diagnoses"]) == (0, "passed", []), output[-3000:]
    batches = [line for line in output.splitlines() if ": batch of " in line]
    assert sorted(batches) == ["rank 0: batch of 4"] * 2 + ["rank 1: batch of 4"] * 2, batches


def test_the_ranks_lightnings_ddp_starts_are_watched():
    """Lightning starts rank 1 by running the script again: the run's startup hook makes
    it a rank (its label from LOCAL_RANK and NODE_RANK), its worker labelled with it.
    Rank 0 is the script's main process: it becomes rank 0 once it set those labels in
    its own environment to start rank 1, so the loader Lightning re-makes in it and that
    loader's worker carry rank 0; the loader the script made before is the script's."""
    evidence = recordings.load(DISTRIBUTED / "clean_lightning_ddp.py")["evidence"]
    assert [(r["rank"], r["local_rank"], r["node"]) for r in evidence["ranks"]] == [
        (0, 0, 0), (1, 1, 0)]
    assert sorted(w["rank"] for w in evidence["workers"]) == [0, 1]
    loaders = [(loader.get("rank"), loader["line"]) for loader in evidence["loaders"]]
    assert loaders[0] == (None, 27) and sorted(
        rank for rank, _line in loaders[1:] if rank is not None) == [0, 1, 1], loaders


def test_a_lambda_lightnings_ddp_spawn_pickles_is_named_before_any_rank_starts():
    """ddp_spawn pickles the Trainer with its LightningModule into every rank: the
    module's lambda fails in the process that starts the ranks, so the diagnosis names
    its line and no rank (none started)."""
    path = CAUSES / "DLW102" / "invalid" / "dlw102_lightning_ddp_spawn.py"
    status, report, output = replay([path.name], path.parent, path)
    first = report["diagnoses"][0]
    assert (status, first["code"], first["line"]) == (1, "DLW102", 16), report["diagnoses"]
    assert "rank" not in first, first
    assert "Can't pickle local object 'Model.__init__.<locals>.<lambda>'" in first["evidence"][0]
    assert "[rank" not in output


HOOKED_SIGNATURE = textwrap.dedent("""\
    import inspect
    from doctor.agent import hooks
    hooks.install()
    from torch.utils.data import DataLoader
    hooked = inspect.signature(DataLoader.__init__)
    assert DataLoader.__init__.__wrapped__ is not DataLoader.__init__
    assert hooked == inspect.signature(DataLoader.__init__.__wrapped__), hooked
    assert "batch_size" in hooked.parameters and "sampler" in hooked.parameters, hooked
    print("same")
""")


def test_the_hooked_loader_keeps_torchs_signature(tmp_path):
    env = dict(os.environ, **{EVENTS: str(tmp_path / "events.jsonl")})
    done = run_python(["-c", HOOKED_SIGNATURE], env=env, capture_output=True, text=True,
                      timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "same", done.stderr[-3000:]


# -- two nodes on one machine, each under its own doctor ---------------------------------

def _free_port():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_two_nodes_each_under_its_doctor_and_explain_on_both_logs(tmp_path):
    """Two torchrun agents (--nnodes 2, one rank each, a c10d rendezvous on 127.0.0.1),
    each under its own doctor; the worker of global rank 1 is killed. The rendezvous,
    not --node-rank, decides which agent gets which ranks: the doctor of the node that
    got rank 1 names DLW201 there, with its node; the other's rank 0 only lost its peer,
    and its doctor says so, not a cause of its own. explain on the two doctors' logs
    names rank 1's failure first, in the right node's log."""
    from concurrent.futures import ThreadPoolExecutor

    name = "dlw201_rank_all_reduce.py"
    shutil.copy(DISTRIBUTED / name, tmp_path / name)
    endpoint = "127.0.0.1:%d" % _free_port()

    def node(number):
        return run_doctor(["--json", "-m", "torch.distributed.run", "--nnodes", "2",
                           "--node-rank", str(number), "--nproc-per-node", "1",
                           "--rdzv-backend", "c10d", "--rdzv-endpoint", endpoint,
                           "--rdzv-id", "two-nodes", name], tmp_path, limit=400)

    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(node, [0, 1]))
    for status, report, _out, err, left in runs:
        assert not left, [p.cmdline() for p in left]
        assert status == 1 and report is not None, err[-3000:]
    firsts = [report["diagnoses"][0] for _s, report, _o, _e, _l in runs]
    failing = next(i for i, first in enumerate(firsts) if first["code"] == "DLW201")
    cause, symptom = firsts[failing], firsts[1 - failing]
    assert (cause["rank"], cause["line"]) == (1, 31), cause
    assert cause["node"] in (0, 1), cause
    assert (symptom["code"], symptom["rank"], symptom["node"]) == (
        "DLW208", 0, 1 - cause["node"]), symptom
    assert "rank 0 did not fail on its own" in symptom["evidence"][0], symptom["evidence"]
    assert "root cause is in a rank of another node" in symptom["evidence"][0]
    assert [d["code"] for d in runs[1 - failing][1]["diagnoses"]] == ["DLW208"]
    logs = []
    for number, (_s, _r, _o, err, _l) in enumerate(runs):
        logs.append("node%d.log" % number)
        (tmp_path / logs[-1]).write_text(err)
    status, report, _out, err, _left = doctor_command(["explain", "--json", *logs], tmp_path)
    assert status == 1, err[-3000:]
    first = report["diagnoses"][0]
    assert (first["code"], first["rank"], first["node"]) == (
        "DLW201", 1, logs[failing]), report["diagnoses"]


def test_a_node_whose_ranks_only_lost_their_peer_is_not_labelled_the_root_cause():
    """One node's doctor of a two-node job: its rank raised only what a lost peer
    causes and no worker failed. The diagnosis says, in its label and its first line of
    evidence, that it followed another node's failure; the same evidence on one node is
    a root cause (a rank killed without an error of its own)."""
    from doctor.evidence import Evidence
    from doctor.ranks import attribute
    from doctor.report import Terminal
    from doctor.rulekit import Diagnosis

    def node_run(nodes):
        ev = Evidence(outcome="crashed", exit_code=1, target=["train.py"], source="run",
                      start_method="spawn")
        ev.ranks = [{"pid": 10, "rank": 0, "local_rank": 0, "node": 0, "nodes": nodes,
                     "failed_at": 5.0, "error": "RuntimeError: [../third_party/gloo/gloo/"
                                                "transport/tcp/pair.cc:534] Connection "
                                                "closed by peer [127.0.0.1]:29500"}]
        diag = Diagnosis("DLW208", "possible", ["a collective lost its peer"],
                         path="train.py", line=31)
        attribute(ev, diag)
        return diag, Terminal(colour=False).render(ev, [diag])

    diag, text = node_run(nodes=2)
    assert diag.elsewhere and "root cause is in a rank of another node" in diag.evidence[0]
    assert "[followed another node's failure, possible]" in text, text
    assert "root cause" not in text.split("\n  at ")[0], text
    assert "elsewhere" not in diag.to_json()
    diag, text = node_run(nodes=1)
    assert not diag.elsewhere and "[root cause, possible]" in text, text


def test_a_node_whose_only_rank_was_ended_before_it_raised_points_to_another_node():
    """One node's doctor of a two-node job: its rank was ended by its launcher before it
    raised anything (the other node's rank failed first). The diagnosis carries that
    rank and says the root cause is another node's."""
    from doctor.evidence import Evidence
    from doctor.ranks import attribute
    from doctor.rulekit import Diagnosis

    ev = Evidence(outcome="crashed", exit_code=1, target=["train.py"], source="run",
                  start_method="spawn")
    ev.ranks = [{"pid": 10, "rank": 0, "local_rank": 0, "node": 1, "nodes": 2}]
    diag = Diagnosis("DLW208", "possible", ["the rank's process ended"])
    attribute(ev, diag)
    assert (diag.rank, diag.node, diag.elsewhere) == (0, 1, True)
    assert "rank 0 did not fail on its own" in diag.evidence[0]
    assert "root cause is in a rank of another node" in diag.evidence[0]


# -- never a process left ---------------------------------------------------------------

#: two ranks summing batches for ever, each with two workers
FOREVER_DDP = textwrap.dedent("""\
    import datetime
    import time

    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader, TensorDataset


    def main():
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=600))
        loader = DataLoader(TensorDataset(torch.arange(64.0)), batch_size=2, num_workers=2,
                            persistent_workers=True)
        total = torch.zeros(1)
        for epoch in range(10 ** 6):
            for i, (batch,) in enumerate(loader):
                total += batch.sum()
                dist.all_reduce(total)
                if epoch == 0 and i == 0:
                    print("rank %d: first batch" % dist.get_rank(), flush=True)
                time.sleep(0.01)


    if __name__ == "__main__":
        main()
""")


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT"])
def test_a_signal_to_the_doctor_ends_the_launcher_every_rank_and_every_worker(tmp_path, name):
    (tmp_path / "train.py").write_text(FOREVER_DDP)
    temp = tempfile.mkdtemp(prefix="dlw-t-")
    doctor = Doctor(["--json", *LAUNCHER, "train.py"], tmp_path, env={"TMPDIR": temp})
    doctor.wait_for("first batch")
    running = leftovers(doctor.token)
    # the keeper, the launcher, two ranks, their four workers (and resource trackers)
    assert len(running) >= 8, [p.cmdline() for p in running]
    doctor.proc.send_signal(getattr(signal, name))
    status, out, err, left = doctor.finish()
    assert status == 128 + getattr(signal, name), err[-3000:]
    report = json.loads(out)
    assert report["outcome"] == "stopped"
    assert not left, [p.cmdline() for p in left]
    assert not os.listdir(temp), os.listdir(temp)
    os.rmdir(temp)


def test_the_hooks_token_is_the_runs():
    """Each run writes its own hook, for its own token: the hook of one run acts in no
    other run's processes."""
    first, second = (tempfile.mkdtemp() for _ in range(2))
    try:
        texts = []
        for folder in (first, second):
            launchers.startup_env(folder, uuid.uuid4().hex, {})
            with open(os.path.join(folder, launchers.STARTUP, "sitecustomize.py")) as handle:
                texts.append(handle.read())
        assert texts[0] != texts[1]
    finally:
        for folder in (first, second):
            shutil.rmtree(folder)
