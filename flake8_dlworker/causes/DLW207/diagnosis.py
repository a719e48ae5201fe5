"""DLW207: Windows' commit limit reached by the workers.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
import re

from doctor.rulekit import Diagnosis, find, first_line, locate, rule, texts
from flake8_dlworker.catalog import RULES

CODE = "DLW207"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")


@rule(order=110)
def dlw207(ev):
    found = find(ev, *SIGNATURES)  # the last one: the Chinese wording
    # torch's shared file mappings on Windows fail with "not enough memory" and "no
    # system resources" when the commit charge is at its limit, too
    near = None if found else find(ev, r"shared file.*error code: <(8|1450)>")
    if not found and not near:
        return None
    diag = Diagnosis(CODE, "certain" if found else "likely", [first_line((found or near)[1])])
    found = found or near
    diag.evidence.extend(_commit_arithmetic(ev))
    return locate(diag, ev, found[0])


#: torch's DLLs whose writable sections Windows commits in every process that loads them
_CUDA_DLL = re.compile(r"(?i)(cudnn|cublas|cufft|cusparse|cusolver|curand|nvrtc|nvfuser|"
                       r"caffe2\w*gpu|torch_cuda|c10_cuda)\w*\.dll")


def _commit_arithmetic(ev):
    """DLW207: the per-worker commit charge, with the numbers the evidence holds."""
    failed = sum(1 for exc in ev.all_exceptions()
                 if "1455" in exc.message and exc.type in ("OSError", "WindowsError"))
    workers = failed
    for exc, text in texts(ev):
        pids = re.search(r"DataLoader worker \(pid\(s\) ([\d, ]+)\) exited", text)
        if pids:
            workers = max(workers, len(pids.group(1).split(",")))
    for warning in ev.warnings:
        planned = re.search(r"will create (\d+) worker processes", warning)
        if planned:
            workers = max(workers, int(planned.group(1)))
    for loader in ev.loaders:
        if isinstance(loader.get("num_workers"), int):
            workers = max(workers, loader["num_workers"])
    dll = find(ev, r"Error loading \"[^\"]*?([\w.-]+\.dll)\"")
    cuda = dll is not None and _CUDA_DLL.search(dll[2].group(1))
    low, high = (1.0, 2.0) if cuda or dll is None else (0.3, 1.0)
    found = []
    if failed:
        found.append("%d worker process%s failed while importing torch%s" % (
            failed, "" if failed == 1 else "es",
            " (loading %s)" % dll[2].group(1) if dll else ""))
    if workers:
        processes = workers + 1
        found.append(
            "commit charge: every worker is a new process that loads torch's %sDLLs, "
            "about %.1f-%.1f GB committed per process; %d worker%s + the main process = "
            "%d x %.1f-%.1f GB = %.0f-%.0f GB before any data is loaded, and Windows refuses "
            "to commit past RAM + paging file" % (
                "CUDA " if cuda or dll is None else "", low, high, workers,
                "" if workers == 1 else "s", processes,
                low, high, processes * low, processes * high))
        fewer = max(1, workers // 2)
        if fewer < workers:
            found.append("num_workers=%d would commit about %.0f-%.0f GB less; or enlarge "
                         "the paging file by at least that much" % (
                             fewer, (workers - fewer) * low, (workers - fewer) * high))
    else:
        found.append("each worker commits about %.1f-%.1f GB for torch's DLLs when it starts: "
                     "num_workers x that must fit in RAM + paging file" % (low, high))
    return found
