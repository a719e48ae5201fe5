"""Fix, re-run, fix again: the combined fix of a run, proved on a patched copy.

Round 1 fixes what the user's run showed (every diagnosis, every site the pickle
probe named, every static finding of those codes), all files at once
(:mod:`doctor.patches.combine`). The patched files are written into a fresh copy of
the script's folder and the copy is re-run under the same start method. A run that
passes (or is stopped after its batches) ends the rounds; a run that shows a new
cause (a second lambda behind the first, a missing guard behind a pickling error)
gives the next round its diagnoses, fixed on top of the last round's text, until
``max_rounds`` or until no maker has anything left to change.
"""
import os
import tempfile

from doctor import keeper, sandbox, signals
from doctor.patches import maker
from doctor.patches.combine import Request, combine, combined_diff
from doctor.patches.sites import evidence_sites, in_project

MAX_ROUNDS = 4


def ran_through(ev):
    """Whether a re-run proves its fix: it passed, or the doctor stopped it once the
    loaders had delivered their --max-batches. A run cut short by a signal to the doctor,
    by --timeout or by the doctor's own stop is never proof."""
    if signals.received() is not None or ev is None or ev.hints.get("wrote_through_links"):
        return False
    if ev.outcome == "passed":
        return True
    return (ev.outcome == "stopped" and ev.hints.get("stopped_by") == "max-batches"
            and bool(ev.hints.get("batches")))


def requests_for(ev, diagnoses, cwd=None):
    """What to fix for one run: the evidence's sites, then each diagnosis' cause."""
    from doctor.patches.workflow import facts_for

    requests = [Request(site.code, site.path, site.line, None, site)
                for site in evidence_sites(ev, diagnoses, cwd)]
    for diag in diagnoses:
        if not diag.path or maker(diag.code) is None:
            continue
        path = os.path.abspath(diag.path)
        if in_project(path, cwd):
            requests.append(Request(diag.code, path, diag.line, facts_for(diag.code, ev)))
    return requests


class Rounds:
    """The rounds of one ``--verify``/``--apply``: each round's diagnosis and the
    combined fix so far (``files``: path -> FileFix, the original text as ``before``)."""

    def __init__(self, cwd=None):
        self.cwd = cwd or os.getcwd()
        self.files = {}
        self.rounds = []      # {"round", "outcome", "diagnoses", "fixed"}
        self.passed = None    # None: never re-run
        self.last = None      # the last re-run's (evidence, diagnoses)

    def fix(self, ev, diagnoses, start_method="spawn"):
        """Add this run's fixes on top of the last round's; True when anything changed."""
        texts = {path: fixed.after for path, fixed in self.files.items()}
        fixes = combine(requests_for(ev, diagnoses, self.cwd), texts, start_method)
        changed = False
        steps = []
        for path, fixed in fixes.items():
            if not fixed.steps or fixed.after == texts.get(path, fixed.before):
                continue
            changed = True
            steps.extend("%s: %s" % (os.path.relpath(path, self.cwd), s) for s in fixed.steps)
            if path in self.files:
                self.files[path].after = fixed.after
                self.files[path].steps.extend(fixed.steps)
            else:
                self.files[path] = fixed
        self.rounds.append({"round": len(self.rounds) + 1, "outcome": ev.outcome,
                            "diagnoses": [d.code for d in diagnoses], "fixed": steps})
        return changed

    def diff(self):
        return combined_diff(self.files, self.cwd)

    def to_json(self):
        return {"patch": self.diff(), "verified": self.passed,
                "files": sorted(os.path.relpath(p, self.cwd) for p, f in self.files.items()
                                if f.changed),
                "rounds": self.rounds}


def converge(ev, diagnoses, target, start_method="spawn", max_rounds=MAX_ROUNDS,
             max_batches=2, timeout=120.0, cwd=None):
    """Rounds of fix and re-run, at most ``max_rounds`` re-runs; the :class:`Rounds`."""
    rounds = Rounds(cwd)
    if not rounds.fix(ev, diagnoses, start_method):
        return rounds
    if not target or target[0] == "-m":
        return rounds  # re-runs are made for a SCRIPT
    folder = os.path.dirname(os.path.realpath(target[0]))
    for _ in range(max_rounds):
        ev, diagnoses = rerun(rounds.files, folder, target, start_method, max_batches,
                              timeout, rounds.cwd)
        if ev is None:
            rounds.passed = False
            return rounds
        if signals.received() is not None:  # the re-run was cut short: nothing is proved
            rounds.passed = False
            rounds.rounds.append({"round": len(rounds.rounds) + 1, "outcome": ev.outcome,
                                  "diagnoses": [], "fixed": [],
                                  "note": "cut short: the doctor received %s"
                                          % signals.name(signals.received())})
            break
        rounds.passed = ran_through(ev) and not [
            d for d in diagnoses if d.confidence == "certain"]
        if rounds.passed:
            rounds.rounds.append({"round": len(rounds.rounds) + 1, "outcome": ev.outcome,
                                  "diagnoses": [d.code for d in diagnoses], "fixed": []})
            break
        if not rounds.fix(ev, diagnoses, start_method):
            break
    rounds.last = (ev, diagnoses)
    return rounds


def rerun(files, folder, target, start_method, max_batches, timeout, cwd):
    """Run a copy of ``folder`` with the fixed texts; (evidence, diagnoses) with paths
    in the user's folder again. (None, None) when a fixed file lies outside it."""
    from doctor.diagnose import diagnose
    from doctor.static import static_findings
    from doctor.supervisor import Run

    keep = set()
    for path in files:
        real = os.path.realpath(path)
        if os.path.commonpath([folder, real]) != folder:
            return None, None
        keep |= sandbox.folders_above(real, folder)
    with tempfile.TemporaryDirectory(prefix=keeper.folder_prefix("rounds")) as tmp:
        copy = os.path.join(tmp, os.path.basename(folder) or "script")
        copied = sandbox.Copy(folder, copy, keep)
        for path, fixed in files.items():
            copied.put(path, fixed.after)
        script = copied.place(target[0])
        originals = copied.watch()
        with open(os.devnull, "w") as sink:
            ev = Run([script, *target[1:]], start_method=start_method, timeout=timeout,
                     max_batches=max_batches, stdout=sink).run()
        wrote = sandbox.changed(originals)
        if wrote:  # never proof: the re-run changed what it read through a link
            ev.hints["wrote_through_links"] = wrote
        ev.static = static_findings(script, start_method)
        real_copy = os.path.realpath(copy)

        def back(path):
            if not path:
                return path
            real = os.path.realpath(path)
            if os.path.commonpath([real_copy, real]) != real_copy:
                return path
            return os.path.join(folder, os.path.relpath(real, real_copy))
        for culprit in ev.probe:
            for key in ("file", "owner_file"):
                culprit[key] = back(culprit.get(key))
        for finding in ev.static:
            finding["path"] = back(finding["path"])
        diagnoses = diagnose(ev)
        for diag in diagnoses:
            diag.path = back(os.path.abspath(diag.path)) if diag.path else diag.path
    ev.target = target[0]
    return ev, diagnoses
