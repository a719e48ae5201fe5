"""DLW106: a DataLoader's options that torch rejects at construction.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
from doctor.rulekit import Diagnosis, find, first_line, locate, rule
from flake8_dlworker.catalog import RULES

CODE = "DLW106"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")


@rule(order=10)
def dlw106(ev):
    found = find(ev, *SIGNATURES)
    if not found:
        return None
    exc, text, _ = found
    diag = Diagnosis(CODE, "certain", [first_line(text)])
    return locate(diag, ev, exc)
