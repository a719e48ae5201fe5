"""DLW112: a DistributedSampler whose set_epoch is never called.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
from doctor.rulekit import Diagnosis, locate, relative, rule, static_finding

CODE = "DLW112"


@rule(order=175)
def dlw112(ev):
    """A loader with a shuffling DistributedSampler began a pass with the sampler's
    epoch unchanged since its first: seen, so certain. After the crashes' rules (a
    crash the run also shows is explained first), before DLW110's advice."""
    if not ev.sampler_epochs:
        return None
    seen = ev.sampler_epochs[0]  # the lowest rank's
    loader = next((one for one in ev.loaders if one.get("key") == seen.get("key")), None)
    made = " made at %s:%s" % (relative(loader["path"]), loader["line"]) \
        if loader and loader.get("line") else ""
    evidence = ["the DataLoader%s draws its indices from a DistributedSampler that shuffles, "
                "seeded with seed + epoch" % made,
                "pass %s over it began%s with the sampler's epoch still %s, as at its first "
                "pass: set_epoch was not called, so this pass repeats the first one's order"
                % (seen.get("passes"), _at(seen), seen.get("epoch"))]
    ranks = sorted({found["rank"] for found in ev.sampler_epochs
                    if found.get("rank") is not None})
    if len(ranks) > 1:
        evidence.append("ranks %s each repeated their first epoch's order"
                        % ", ".join(map(str, ranks)))
    diag = Diagnosis(CODE, "certain", evidence)
    diag.rank = seen.get("rank")
    if static_finding(ev, CODE) is not None:
        return locate(diag, ev)  # the line that makes the sampler
    if seen.get("line"):
        diag.path, diag.line = seen["path"], seen["line"]  # the loop over the loader
    return diag


def _at(found):
    return " (at %s:%s)" % (relative(found["path"]), found["line"]) if found.get("line") else ""
