"""DLW101: a spawned child that tried to start workers while importing the main module.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
from doctor.rulekit import Diagnosis, find, locate, rule, static_finding, user_frame
from flake8_dlworker.catalog import RULES

CODE = "DLW101"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")


@rule(order=40)
def dlw101(ev):
    found = find(ev, *SIGNATURES)
    if not found:
        return None
    exc, _text, _ = found
    who = "a spawned child" if exc is None or exc.process != "main" else "the process"
    diag = Diagnosis(CODE, "certain", [
        "%s re-ran the script's module-level code as __mp_main__ and tried to start "
        "workers of its own: RuntimeError: An attempt has been made to start a new process "
        "before the current process has finished its bootstrapping phase." % who])
    frame = user_frame(exc)
    if frame is not None and static_finding(ev, CODE) is None:
        diag.evidence.append("the child was at %s:%d when it tried" % (frame.path, frame.line))
    return locate(diag, ev, exc)
