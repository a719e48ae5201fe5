"""DLW201: a worker killed by the out-of-memory killer.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
import math

from doctor import forecast
from doctor.rulekit import (
    Diagnosis, MEMORY_UNEXPLAINED, at_loader, find, first_line, locate, rule, worker_with_signal,
    worker_words)
from flake8_dlworker.catalog import RULES

CODE = "DLW201"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")


@rule(order=100)
def dlw201(ev):
    worker = worker_with_signal(ev, "SIGKILL")
    found = find(ev, *SIGNATURES)
    if worker is None and not found:
        return None
    if worker is not None:
        used = "an unmeasured amount"
        if worker.peak_rss_gb is not None:
            used = "%.2f GiB" % worker.peak_rss_gb
        avail = ev.host.get("ram_gb")
        text = "%s was killed by signal 9 (SIGKILL) while using %s" % (worker_words(worker), used)
        if worker.available_gb is not None and avail:
            text += " of %.2f GiB available (host RAM %.1f GiB)" % (worker.available_gb, avail)
        evidence = [text]
        if len(worker.rss_gb) > 1:
            steps = worker.rss_gb[-8:]
            evidence.append("its RSS over the run: " + ", ".join(
                "%.2f GiB at %.1fs" % (gb, t) for t, gb in steps))
        peaks = [w.peak_rss_gb for w in ev.workers if w.peak_rss_gb is not None]
        if len(peaks) > 1:
            evidence.append("peak RSS per worker: " + ", ".join("%.2f GiB" % p for p in peaks))
        predicted = forecast.for_run(ev)  # which worker grew, how fast, and how far
        if predicted is not None:
            evidence.extend(predicted.text())
        evidence.extend(_memory_unexplained(ev, worker, peaks))
        # SIGKILL is what the OOM killer sends; memory nearly gone makes it certain
        tight = (worker.available_gb is not None and avail
                 and worker.available_gb < 0.05 * avail)
        diag = Diagnosis(CODE, "certain" if tight else "likely", evidence)
        return at_loader(diag, ev, worker)
    diag = Diagnosis(CODE, "likely", [first_line(found[1])])
    killer = find(ev, r"Out of memory: Kill", r"oom[-_]kill", r"OOM ?Killed")
    if killer and killer[1] != found[1]:
        diag.confidence = "certain"  # the kernel or the scheduler says it was the OOM killer
        diag.evidence.append(first_line(killer[1]))
    return locate(diag, ev, found[0] if found else None)


def _memory_unexplained(ev, worker, peaks):
    """A line when the workers' peaks fit many times over in the memory available at
    the kill: then no worker count avoids it (a limit the doctor could not read, a leak
    that grows without bound, or another sender of SIGKILL)."""
    counts = [loader.get("num_workers") for loader in ev.loaders if loader.get("num_workers")]
    workers = max(counts) if counts else len(ev.workers)
    peak = max(peaks) if peaks else worker.peak_rss_gb
    room = worker.available_gb
    if not workers or not peak or room is None or math.floor(room / peak) < workers:
        return []
    return ["%s: the run had %d worker(s) and the %.2f GiB available would hold %d at "
            "%.2f GiB peak each, so fewer workers would not have avoided it; look for a "
            "memory limit the doctor could not read, a cache that grows without bound, or "
            "another sender of SIGKILL" % (MEMORY_UNEXPLAINED, workers, room,
                                           math.floor(room / peak), peak)]
