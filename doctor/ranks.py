"""The ranks of a distributed run: where its root cause happened, and what the other
ranks showed because of it.

Under a launcher or ``mp.spawn`` every event of a rank and of its workers carries the
rank's labels (:mod:`doctor.agent.startup`), and the evidence holds each rank's main
process and its uncaught exception (``Evidence.ranks``). The diagnosis rules read the
evidence of every rank together; the root cause is the first failure in time across
ranks (a worker of a rank that ended abnormally, a rank that raised). What the others
show because of it, a collective that lost its peer or timed out, the launcher's
SIGTERM, its ``ChildFailedError``, is folded into the root cause's evidence, as a
symptom is for one process.
"""
from doctor.distributed import FOLLOWS, LAUNCHER_TEXTS
from doctor.rulekit import find, first_line, signame


def failures(ev):
    """(time, rank, what) of every failure seen in a rank, the earliest first: a worker
    that was killed or exited with an error, a rank that raised."""
    found = []
    for worker in ev.workers:
        if worker.rank is None or worker.ended_at is None:
            continue
        if worker.signal:
            what = "its worker %s was killed by %s" % (
                worker.worker_id if worker.worker_id is not None else "(pid %d)" % worker.pid,
                signame(worker.signal))
        elif worker.exitcode:
            what = "its worker %s exited with status %d" % (
                worker.worker_id if worker.worker_id is not None else "(pid %d)" % worker.pid,
                worker.exitcode)
        else:
            continue
        found.append((worker.ended_at, worker.rank, what))
    for rank in ev.ranks:
        if rank.get("failed_at") is not None and rank.get("rank") is not None:
            found.append((rank["failed_at"], rank["rank"], "it raised %s" % rank.get("error")))
    return sorted(found, key=lambda f: f[0])


def several_nodes(ev):
    """Whether the run's job spans several nodes: its ranks here are on several, or the
    launcher told each rank how many the job has (each node's doctor sees its own)."""
    nodes = {r.get("node") for r in ev.ranks if r.get("node") is not None}
    return len(nodes) > 1 or any((r.get("nodes") or 1) > 1 for r in ev.ranks)


def elsewhere(found):
    """Whether every failure of ``failures()`` only follows one this run did not see: no
    worker of a rank failed, and each rank raised what a lost peer or the launcher
    causes (a collective's ``Connection closed by peer``, a timeout)."""
    return bool(found) and all(what.startswith("it raised ") and FOLLOWS.search(what)
                               for _t, _rank, what in found)


def attribute(ev, root):
    """Set the root cause's rank (when its rule did not), its node where the run had
    several, and fold into its evidence what the other ranks and the launcher showed."""
    if not ev.ranks:
        return
    found = failures(ev)
    if root.rank is None and found:
        root.rank = found[0][1]
    watched = sorted({r["rank"] for r in ev.ranks if r.get("rank") is not None})
    if root.rank is None and not found and len(watched) == 1 and several_nodes(ev) \
            and ev.outcome != "passed":
        # one node of several, whose only rank was ended before it raised anything of
        # its own (its launcher stopped it when another node's rank failed)
        root.rank, root.elsewhere = watched[0], True
        root.evidence.insert(0, "rank %d did not fail on its own: it was ended before it "
                                "raised an error; no rank this run watched failed, so the "
                                "root cause is in a rank of another node (that node's "
                                "doctor names it; so does `python -m doctor explain` on "
                                "every node's log)" % root.rank)
    if several_nodes(ev) and root.rank is not None:
        root.node = next((r.get("node") for r in ev.ranks if r.get("rank") == root.rank), None)
    if root.rank is None or ev.outcome == "passed":
        return  # a run that passed: no rank failed, none was ended because of another
    started = next((t for t, rank, _what in found if rank == root.rank), None)
    if started is not None and elsewhere(found):
        root.elsewhere = several_nodes(ev)
        root.evidence.insert(0, "rank %d did not fail on its own: %s, what a rank shows when "
                                "a peer failed first; no rank this run watched failed "
                                "before it, so the root cause is in a rank %s" % (
                                    root.rank, found[0][2][:300],
                                    "of another node (that node's doctor names it; so does "
                                    "`python -m doctor explain` on every node's log)"
                                    if several_nodes(ev) else
                                    "ended without an error of its own (killed)"))
    elif started is not None:
        root.evidence.append("rank %d failed first, of %d rank(s)" % (root.rank, len(ev.ranks)))
    told = {root.rank}
    for t, rank, what in found:
        if rank in told:
            continue
        told.add(rank)
        after = " %.1fs later" % (t - started) if started is not None else ""
        root.evidence.append("rank %d failed%s, because of it: %s" % (rank, after, what[:300]))
    launcher = find(ev, *LAUNCHER_TEXTS)
    who = "the launcher" if ev.hints.get("launcher") else "the process that started the ranks"
    for rank in ev.ranks:
        if rank.get("rank") is not None and rank["rank"] not in told:
            told.add(rank["rank"])
            root.evidence.append("rank %d did not fail on its own: %s" % (
                rank["rank"], "it was ended with the run" if launcher is None else
                "%s ended it when rank %d failed" % (who, root.rank)))
    if launcher:
        exc, text, _match = launcher
        name = exc.type.rsplit(".", 1)[-1] if exc is not None else first_line(text)[:200]
        root.evidence.append("%s then gave up with %s (exit status %s)"
                             % (who, name, ev.exit_code))
