"""DLW202: a worker's bus error: shared memory too small.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
from doctor.rulekit import (
    Diagnosis, at_loader, find, first_line, locate, rule, worker_with_signal, worker_words)
from flake8_dlworker.catalog import RULES

CODE = "DLW202"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")


@rule(order=70)
def dlw202(ev):
    worker = worker_with_signal(ev, "SIGBUS")
    found = find(ev, *SIGNATURES)
    if worker is None and not found:
        return None
    diag = Diagnosis(CODE, "certain", [])
    if worker is not None:
        diag.evidence.append("%s was killed by signal %d (SIGBUS)" % (
            worker_words(worker), worker.signal))
    if found:
        diag.evidence.append(first_line(found[1]))
    shm = ev.host.get("shm_gb")
    if shm is not None:
        used = ev.host.get("shm_used_gb")
        diag.evidence.append("/dev/shm: %.2f GiB%s" % (
            shm, "" if used is None else ", %.2f GiB in use at the end" % used))
    if worker is not None:
        return at_loader(diag, ev, worker)
    return locate(diag, ev, found[0] if found else None)
