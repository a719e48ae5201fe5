"""DLW210: forked workers that copy the dataset's Python objects as they read them.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
from doctor import forecast
from doctor.rulekit import Diagnosis, at_loader, rule, worker_with_signal, worker_words
from flake8_dlworker.catalog import RULES

CODE = "DLW210"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")


@rule(order=90)
def dlw210(ev):
    """Under fork, workers whose memory rises with the batches while the dataset holds
    large Python containers: copy-on-access, not a leak."""
    if ev.start_method != "fork" or not ev.containers:
        return None
    predicted = forecast.for_run(ev)
    if predicted is None:
        return None
    evidence = predicted.text()
    evidence.append("the dataset holds Python objects, whose reference counts every read "
                    "writes, so each forked worker copies the pages it reads: " + ", ".join(
                        "%s (a %s of %s)" % (c["path"], c["type"], "{:,}".format(c["length"]))
                        for c in ev.containers[:4]))
    worker = worker_with_signal(ev, "SIGKILL")
    if worker is not None:
        evidence.insert(0, "%s was killed by signal 9 (SIGKILL), most likely the "
                           "out-of-memory killer" % worker_words(worker))
    diag = Diagnosis(CODE, "likely", evidence)
    return at_loader(diag, ev, worker)
