"""From diagnoses to patches: each diagnosis whose file lies under the working
directory gets ``patch`` (a unified diff) from its maker (:func:`propose`); nothing is
written here. The re-run that proves a fix is :mod:`doctor.pipeline`'s, the writing
:mod:`doctor.patches.write`'s.
"""
import os

from doctor.patches import fixed_source, maker, unified_diff
from doctor.patches.sites import evidence_sites, in_project
from doctor.patches.write import under_cwd

_GIB = 1024 ** 3
#: batches per loader in the re-run beyond those the first run delivered before it
#: crashed: enough to start every worker and load from it, and to pass the point where
#: the first run died (a crash that needs many batches, such as DLW204, is reached)
VERIFY_BATCHES = 2
VERIFY_TIMEOUT_S = 120.0


def facts_for(code, ev):
    """Runtime measurements a maker needs: the ranks of a distributed run (``ranks``,
    for every cause: a change that is right for one process may not be for several that
    share a node), and DLW201's memory per worker and available."""
    if ev is None:
        return {}
    facts = {"ranks": len(ev.ranks)} if ev.ranks else {}
    if code != "DLW201":
        return facts
    peaks = [w.peak_rss_gb for w in ev.workers if w.peak_rss_gb]
    workers = [loader.get("num_workers") for loader in ev.loaders if loader.get("num_workers")]
    if peaks:
        facts["peak_rss_gb"] = max(peaks)
    if workers:
        facts["num_workers"] = max(workers)
    from doctor.available import available_bytes

    # measured after the run ended: what the workers may share, the script's own aside
    available = available_bytes()
    if available is not None:
        facts["available_gb"] = available / _GIB
    return facts


def requests_for(ev, diagnoses, cwd=None):
    """What to fix for one run: the evidence's sites, then each diagnosis' cause."""
    from doctor.patches.combine import Request

    requests = [Request(site.code, site.path, site.line, None, site)
                for site in evidence_sites(ev, diagnoses, cwd)]
    for diag in diagnoses:
        if not diag.path or maker(diag.code) is None:
            continue
        path = os.path.abspath(diag.path)
        if in_project(path, cwd):
            requests.append(Request(diag.code, path, diag.line, facts_for(diag.code, ev)))
    return requests


class Proposal:
    """One diagnosis' fix: the file, its text before and after."""

    def __init__(self, diag, path, before, after):
        self.diag, self.path, self.before, self.after = diag, path, before, after


def propose(ev, diagnoses, start_method="spawn", cwd=None):
    """Set ``patch`` on every diagnosis that has a safe fix; the proposals, in order."""
    proposals = []
    seen = set()
    for diag in diagnoses:
        if not diag.path or not under_cwd(diag.path, cwd) or not diag.path.endswith(".py"):
            continue
        if (diag.code, diag.path) in seen:
            continue
        seen.add((diag.code, diag.path))
        try:
            with open(diag.path, "r", encoding="utf-8", newline="") as handle:
                before = handle.read()
        except (OSError, UnicodeDecodeError):
            continue
        rel = os.path.relpath(os.path.realpath(diag.path), os.path.realpath(cwd or os.getcwd()))
        try:
            after = fixed_source(diag.code, rel, before, diag.line, facts_for(diag.code, ev),
                                 start_method)
        except Exception:
            if os.environ.get("DLW_DOCTOR_DEBUG"):
                raise
            after = None
        if after is None:
            after = _from_evidence(ev, diag, before, start_method, cwd)
        if after is None:
            continue
        diag.patch = unified_diff(rel.replace(os.sep, "/"), before, after)
        proposals.append(Proposal(diag, diag.path, before, after))
    return proposals


def _from_evidence(ev, diag, before, start_method, cwd):
    """The diagnosis' file fixed at the sites the run named for its code, or None."""
    from doctor.patches.combine import fix_file

    path = os.path.abspath(diag.path)
    asked = [r for r in requests_for(ev, [diag], cwd)
             if r.code == diag.code and r.path == path]
    if not any(r.site is not None for r in asked):
        return None
    fixed = fix_file(path, before, asked, start_method)
    return fixed.after if fixed.changed else None


def verify_batches(ev, max_batches=None):
    """The re-run's --max-batches: the user's, else past the point the first run reached."""
    if max_batches:
        return max_batches
    return VERIFY_BATCHES + int((ev.hints.get("batches") if ev is not None else 0) or 0)
