"""DLW101: a spawned child that tried to start workers while importing the main module.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
from doctor.rulekit import Diagnosis, find, locate, rule, static_finding, user_frame
from flake8_dlworker.catalog import RULES

CODE = "DLW101"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")
_BOOTSTRAPPING = ("RuntimeError: An attempt has been made to start a new process before the "
                  "current process has finished its bootstrapping phase.")
#: what Lightning's launcher raises first when a spawning strategy's ranks reach fit()
_LIGHTNING = ("Lightning refused to launch the ranks again: Launching multiple processes "
              "with the 'spawn' start method requires that your script guards the main "
              "function with an `if __name__ == \"__main__\"` clause.")


@rule(order=40)
def dlw101(ev):
    found = find(ev, *SIGNATURES)
    if not found:
        return None
    exc, text, _ = found
    who = "a spawned child" if exc is None or exc.process != "main" else "the process"
    said = _BOOTSTRAPPING if "bootstrapping" in text else _LIGHTNING
    diag = Diagnosis(CODE, "certain", [
        "%s re-ran the script's module-level code as __mp_main__ and tried to start "
        "processes of its own: %s" % (who, said)])
    frame = user_frame(exc)
    if frame is not None and static_finding(ev, CODE) is None:
        diag.evidence.append("the child was at %s:%d when it tried" % (frame.path, frame.line))
    return locate(diag, ev, exc)
