"""``--compare``: the script under its own start method, then under the forced one.

A script that passes on the Linux box it was written on (fork, the default there before
Python 3.14) and crashes on Windows, macOS or Python 3.14 Linux shows the difference in
one line; a cause that only fork has (CUDA initialised before the workers are forked, a
lock held by another thread at fork) is diagnosed from the first run. Both runs are
bounded by ``--max-batches`` (``DEFAULT_BATCHES`` when it is not given): the question is
whether the workers start and deliver, not a whole training run twice.
"""
#: --compare without --max-batches: enough for every loader's workers to start and deliver
DEFAULT_BATCHES = 20

#: where a crash under the forced method happens by default
_WHERE = {
    "spawn": "will crash on Windows, macOS and Python 3.14 Linux",
    "forkserver": "will crash on Python 3.14 Linux, where forkserver is the default",
    "fork": "will crash wherever fork is the start method (Linux before Python 3.14)",
}
_VERB = {"crashed": "crashes", "timeout": "hangs", "passed": "passes", "stopped": "passes"}


def summary(own, forced, method):
    """One line: how the two runs differ. ``own``/``forced``: their Evidence (the same
    one when the second run did not happen); ``method``: the forced start method."""
    first, second = _VERB[own.outcome], _VERB[forced.outcome]
    if own.start_method == method:
        return "the script's own start method is %s, the forced one: one run tells all" % (
            method)
    if own is forced:  # a signal ended the doctor before the second run
        return "%s under %s; not run under %s" % (first, own.start_method, method)
    head = "%s under %s, %s under %s" % (first, own.start_method, second, forced.start_method)
    if first == "passes" and second != "passes":
        return "%s: %s" % (head, _WHERE.get(forced.start_method, "will fail elsewhere"))
    if first != "passes" and second == "passes":
        return "%s: a cause only %s has; %s avoids it" % (
            head, own.start_method, forced.start_method)
    return head


def run_json(ev, diagnoses):
    return {"start_method": ev.start_method, "outcome": ev.outcome,
            "exit_code": ev.exit_code, "diagnoses": [d.to_json() for d in diagnoses]}


def to_json(runs, line):
    """The ``compare`` key: the summary line and each run, the script's own first."""
    return {"summary": line, "runs": [run_json(ev, diagnoses) for ev, diagnoses in runs]}


def lines(runs, line):
    """The terminal's closing block."""
    out = ["", "compare: " + line]
    for ev, diagnoses in runs:
        status = "" if ev.exit_code is None else " (exit status %d)" % ev.exit_code
        found = ", ".join("%s at %s:%s" % (d.code, d.path, d.line) if d.path else d.code
                          for d in diagnoses) or "no diagnosis"
        out.append("  under %s: %s%s: %s" % (ev.start_method, ev.outcome, status, found))
    return out
