"""Fix, re-run, fix again: the combined fix of a run, proved on a patched copy.

Round 1 fixes what the user's run showed (every diagnosis, every site the pickle
probe named, every static finding of those codes), all files at once
(:mod:`doctor.patches.combine`). The patched files are written into a fresh copy of
the script's folder and the copy is re-run under the same start method. A run that
passes (or is stopped after its batches) ends the rounds; a run that shows a new
cause (a second lambda behind the first, a missing guard behind a pickling error)
gives the next round its diagnoses, fixed on top of the last round's text, until
``max_rounds`` or until no maker has anything left to change. The loop of re-runs is
:func:`doctor.pipeline.converge`; this module keeps the rounds' fix and record.
"""
import os

from doctor import signals
from doctor.patches.combine import combine, combined_diff
from doctor.patches.workflow import requests_for

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
