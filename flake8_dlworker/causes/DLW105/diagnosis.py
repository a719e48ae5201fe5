"""DLW105: the pin-memory thread died.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
import re

from doctor.rulekit import Diagnosis, find, first_line, locate, rule
from flake8_dlworker.catalog import RULES

CODE = "DLW105"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")


@rule(order=120)
def dlw105(ev):
    """The pin-memory thread died (page-locked host memory, or torch 1.7's bug)."""
    found = find(ev, *SIGNATURES)
    pinned = [exc for exc in ev.all_exceptions()
              if exc.process == "pin memory thread" and exc.type
              and "can only test a child process" not in exc.message]  # shutdown noise
    if not found and not pinned:
        return None
    exc = pinned[0] if pinned else found[0]
    text = exc.last_line() if exc is not None else first_line(found[1])
    memory = re.search(r"out of memory|CUDA error|cannot allocate|pinned", text, re.I)
    diag = Diagnosis(CODE, "likely" if memory else "possible",
                     ["the pin-memory thread failed: %s" % text])
    if re.search(r"not enough values to unpack \(expected 2, got 0\)", text):
        diag.evidence.append("this is torch 1.7's persistent_workers + pin_memory bug "
                             "(fixed in 1.8): upgrade torch, or set pin_memory=False")
    return locate(diag, ev, found[0] if found else exc)
