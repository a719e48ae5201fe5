"""DLW209: a dataset too large to copy into every worker.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
from doctor import forecast
from doctor.rulekit import (
    Diagnosis, at_loader, find, first_line, loader_of, locate, rule, worker_with_signal,
    worker_words)
from flake8_dlworker.catalog import RULES

CODE = "DLW209"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")


#: a copy of the dataset smaller than this is never what filled a worker
LARGE_COPY_GB = 64 / 1024.0


#: the copy's share of the killed worker's peak memory that makes it the cause
COPY_SHARE = 0.25


def _copies(ev, worker):
    """What the worker's loader sends each worker as its dataset: (bytes, seconds, workers)."""
    loader = loader_of(ev, worker)
    key = loader.get("key") if loader is not None else None
    parts = [p for p in ev.payload if p.get("role") == "dataset"
             and (key is None or p.get("key") == key)]
    if not parts:
        return None
    part = max(parts, key=lambda p: p.get("bytes") or 0)
    return part.get("bytes") or 0, part.get("seconds") or 0.0, part.get("workers") or 1


def _grew(ev, worker):
    predicted = forecast.for_run(ev)
    role = "worker %s" % worker.worker_id
    return predicted is not None and any(g.role == role for g in predicted.growing)


def _while_starting_a_worker(exc):
    return exc is not None and any(f.path.replace("\\", "/").endswith(_SENDS_ARGUMENTS)
                                   for f in exc.frames)


_SENDS_ARGUMENTS = ("multiprocessing/reduction.py", "multiprocessing/popen_spawn_win32.py",
                    "multiprocessing/popen_spawn_posix.py",
                    "multiprocessing/popen_forkserver.py")


@rule(order=20)
def dlw209(ev):
    # pickle's 4 GiB limit (protocol 3, Python 3.7 and older, or a script asking for it)
    found = find(ev, *SIGNATURES)
    if found is None:  # Python 3.8+: the copy is made, the parent's memory runs out
        found = next(((exc, "%s: %s" % (exc.type, exc.message), None)
                      for exc in ev.all_exceptions()
                      if exc.type == "MemoryError" and _while_starting_a_worker(exc)), None)
    if found is not None:
        said = found[0].last_line() if found[0] is not None else first_line(found[1])
        diag = Diagnosis(CODE, "certain", [said])
        if _while_starting_a_worker(found[0]):
            diag.evidence.append("raised while the parent pickled a worker's arguments "
                                 "(multiprocessing.reduction.dump) to start it")
        return locate(diag, ev, found[0])
    worker = worker_with_signal(ev, "SIGKILL")
    if worker is None or _grew(ev, worker):
        return None  # a worker that grew while it ran is the out-of-memory rule's
    copies = _copies(ev, worker)
    if copies is None:
        return None
    size, seconds, workers = copies
    size_gb = size / 1024.0 ** 3
    if size_gb < LARGE_COPY_GB:
        return None
    share = size_gb / worker.peak_rss_gb if worker.peak_rss_gb else None
    available = worker.available_gb or ev.host.get("ram_gb")
    of_available = size_gb * workers / available if available else None
    if not ((share or 0) >= COPY_SHARE or (of_available or 0) >= COPY_SHARE):
        return None
    text = "%s was killed by signal 9 (SIGKILL)" % worker_words(worker)
    if worker.peak_rss_gb is not None:
        text += " at %.2f GiB" % worker.peak_rss_gb
        if share is not None and share <= 1:  # else sampled before its copy arrived
            text += ", %d%% of it its copy of the dataset" % round(100 * share)
    evidence = [text + "; its memory did not grow while it ran"]
    total = "each of %d workers receives its own pickled copy of the dataset: %s" % (
        workers, _size(size_gb))
    if seconds >= 0.01:
        total += " (pickled in %.2f s)" % seconds
    total += ", %s in all" % _size(size_gb * workers)
    if of_available is not None:
        total += ", %d%% of the %.2f GiB available" % (round(100 * of_available), available)
    evidence.append(total)
    diag = Diagnosis(CODE, "certain" if (share or 0) >= COPY_SHARE else "likely",
                     evidence)
    return at_loader(diag, ev, worker)


def _size(gb):
    return "%.1f GiB" % gb if gb >= 1 else "%.0f MiB" % (gb * 1024)
