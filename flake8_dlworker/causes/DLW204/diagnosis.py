"""DLW204: the main process out of file descriptors.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
from doctor.rulekit import Diagnosis, find, first_line, locate, rule
from flake8_dlworker.catalog import RULES

CODE = "DLW204"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")


@rule(order=60)
def dlw204(ev):
    found = find(ev, *SIGNATURES)
    if not found:
        return None
    diag = Diagnosis(CODE, "certain", [first_line(found[1])])
    limit = ev.host.get("nofile_limit")
    if limit:
        diag.evidence.append("open-files limit (RLIMIT_NOFILE) of the run: %d" % limit)
    if ev.sharing_strategy:
        diag.evidence.append("tensor sharing strategy: %s" % ev.sharing_strategy)
    return locate(diag, ev, found[0])
