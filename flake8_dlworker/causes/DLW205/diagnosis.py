"""DLW205: an exception in a worker, or a worker that exited with a status.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
from doctor.rulekit import Diagnosis, find, first_line, rule, user_frame, worker_words
from flake8_dlworker.catalog import RULES

CODE = "DLW205"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")


@rule(order=130)
def dlw205(ev):
    for exc in ev.all_exceptions():
        if exc.original is not None and exc.process == "main" and exc.original.type:
            original = exc.original
            diag = Diagnosis(CODE, "certain", [
                "%s raised %s" % (original.process, original.last_line())])
            frame = user_frame(original)
            if frame is not None:
                diag.path, diag.line = frame.path, frame.line
                diag.evidence.append("raised at %s:%d in %s" % (frame.path, frame.line, frame.func))
            return diag
    return None


@rule(order=150)
def worker_exit(ev):
    """A worker ended with an exit status and nothing else says why."""
    found = find(ev, *SIGNATURES)
    for worker in ev.workers:
        if worker.exitcode not in (None, 0) and not worker.signal:
            printed = [exc for exc in ev.all_exceptions() if exc.process != "main"]
            said = ("; the last error a child process printed: %s (%s)" % (
                printed[-1].last_line()[:300], printed[-1].process) if printed
                else " and printed no traceback")
            return Diagnosis(CODE, "possible", ["%s exited with status %d%s" % (
                worker_words(worker), worker.exitcode, said)])
    if found and ev.source != "log":
        return Diagnosis(CODE, "possible", [first_line(found[1])])
    return None  # a log: only the generic symptom, see generic()
