"""DLW110: more workers than the host's CPUs, in one process or across the ranks of a
distributed run on one node.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
import re

from doctor.rulekit import Diagnosis, locate, relative, rule
from flake8_dlworker.catalog import RULES

CODE = "DLW110"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")


@rule(order=180)
def dlw110(ev):
    """The workers of every rank of one node together above the usable CPUs (torch
    checks each process alone, so it does not warn), else torch's own warning for one
    loader."""
    warned = _torch_warning(ev)
    total = _ranks_total(ev)
    if total is not None:
        if warned is not None:
            total.evidence.append(warned.evidence[0])
        return total
    return warned


def _torch_warning(ev):
    for warning in ev.warnings:
        match = re.search(SIGNATURES[0], warning)  # torch's warning: workers, CPUs
        if match:
            diag = Diagnosis(CODE, "certain", [warning.split(". ")[0] + "."])
            diag.evidence.append("num_workers=%s, usable CPUs: %s" % match.groups())
            for loader in ev.loaders:
                if str(loader.get("num_workers")) == match.group(1) and loader.get("line"):
                    diag.path, diag.line = loader["path"], loader["line"]
                    if loader.get("rank") is not None:
                        diag.rank = loader["rank"]
                    return diag
            return locate(diag, ev)
    return None


def rank_workers(ev):
    """{node: {rank: the loader that started the most workers in that rank}} of a
    distributed run: the loaders whose workers started (``pids``), each rank's largest,
    as the fewest worker processes the rank runs at once."""
    found = {}
    for loader in ev.loaders:
        if loader.get("rank") is None or not loader.get("num_workers") \
                or not loader.get("pids"):
            continue
        ranks = found.setdefault(loader.get("node"), {})
        kept = ranks.get(loader["rank"])
        if kept is None or loader["num_workers"] > kept["num_workers"]:
            ranks[loader["rank"]] = loader
    return found


def _ranks_total(ev):
    """Two or more ranks of one node whose workers, together, outnumber its usable CPUs
    (``ev.host["cpus"]``: the affinity mask the ranks inherit, capped by a cgroup CPU
    quota)."""
    cpus = ev.host.get("cpus")
    if not cpus:
        return None
    for node, ranks in sorted(rank_workers(ev).items(), key=lambda item: str(item[0])):
        total = sum(loader["num_workers"] for loader in ranks.values())
        if len(ranks) < 2 or total <= cpus:
            continue
        counts = [ranks[rank]["num_workers"] for rank in sorted(ranks)]
        if len(set(counts)) == 1:
            figure = "%d ranks x %d workers" % (len(counts), counts[0])
        else:
            figure = "%d ranks with %s workers" % (len(counts), " + ".join(map(str, counts)))
        where = " on node %s" % node if node is not None and len(rank_workers(ev)) > 1 else ""
        diag = Diagnosis(CODE, "certain", [
            "%s = %d worker processes on %d usable CPUs%s" % (figure, total, cpus, where),
            "torch checks each rank's num_workers alone against the CPUs and does not warn: "
            "the ranks of one node share its CPUs, and so do their workers"])
        first = ranks[min(ranks)]
        for rank in sorted(ranks):
            loader = ranks[rank]
            if loader.get("line"):
                diag.evidence.append("rank %d: the DataLoader made at %s:%d (num_workers=%d)"
                                     % (rank, relative(loader["path"]), loader["line"],
                                        loader["num_workers"]))
        diag.rank = first["rank"]
        if first.get("line"):
            diag.path, diag.line = first["path"], first["line"]
        return diag
    return None
