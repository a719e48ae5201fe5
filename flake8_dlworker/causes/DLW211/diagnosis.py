"""DLW211: a dataset changed in the main process after persistent workers took their copy.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
from doctor.rulekit import Diagnosis, locate, relative, rule, static_finding
from flake8_dlworker.catalog import RULES

CODE = "DLW211"
#: the error texts the record lists for it (none: the run passes with the wrong data)
SIGNATURES = RULES[CODE].texts("signatures")


@rule(order=185)
def dlw211(ev):
    """A persistent loader began an epoch while its dataset's attributes differed from
    the copy its workers received: the change was seen, so it is certain. Last among the
    rules: a crash that the run also shows is explained first."""
    if not ev.dataset_changes:
        return None
    seen = ev.dataset_changes[0]
    loader = next((one for one in ev.loaders if one.get("key") == seen.get("key")), None)
    made = " made at %s:%s" % (relative(loader["path"]), loader["line"]) \
        if loader and loader.get("line") else ""
    evidence = ["the DataLoader%s has persistent workers: they received the dataset once, "
                "when its first epoch began, and keep that copy" % made]
    for found in ev.dataset_changes:
        evidence.append("when pass %s over the loader began%s, the main process's dataset "
                        "differed from the workers' copy: %s" % (
                            (found.get("epoch") or 0) + 1, _at(found),
                            "; ".join(_change(c) for c in found.get("changes") or ())))
    diag = Diagnosis(CODE, "certain", evidence)
    if static_finding(ev, CODE) is not None:
        return locate(diag, ev)  # the line that assigns it
    if seen.get("line"):
        diag.path, diag.line = seen["path"], seen["line"]  # the loop over the loader
    return diag


def _at(found):
    return " (at %s:%s)" % (relative(found["path"]), found["line"]) if found.get("line") else ""


def _change(change):
    name = "dataset" + change.get("attribute", "")
    if change.get("added"):
        return "%s was added%s" % (name, _value(" (now %s)", change.get("after")))
    if change.get("before") is not None and change.get("after") is not None:
        return "%s was %s, now %s" % (name, change["before"], change["after"])
    return "%s is another object" % name


def _value(template, shown):
    return template % shown if shown is not None else ""
