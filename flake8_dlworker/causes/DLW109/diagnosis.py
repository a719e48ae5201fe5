"""DLW109: every worker yields the same samples.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
from doctor.rulekit import Diagnosis, first_line, found_in, locate, rule, symptom_texts
from flake8_dlworker.catalog import RULES

CODE = "DLW109"
#: the words with which torch, Lightning and users' own checks report it (the record's)
SIGNATURES = RULES[CODE].texts("signatures")


@rule(order=160)
def dlw109(ev):
    found = found_in(symptom_texts(ev), SIGNATURES)
    if not found:
        return None
    exc, text = found
    diag = Diagnosis(CODE, "likely", [first_line(text)[:300]])
    return locate(diag, ev, exc)
