"""DLW107: CUDA in a worker, or CUDA tensors sent to the workers.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
import re

from doctor.rulekit import Diagnosis, find, first_line, locate, rule, static_finding
from flake8_dlworker.catalog import RULES

CODE = "DLW107"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")


@rule(order=50)
def dlw107(ev):
    found = find(ev, *SIGNATURES)
    if not found:
        return _cuda_tensor_sent(ev)
    exc, text, _ = found
    # a spawned child's own CUDA error: unpickling the dataset's CUDA tensors in the worker
    in_worker = exc is not None and (exc.process.startswith(("worker", "child")) or (
        exc.original is not None and exc.original.process.startswith("worker")
        and found[2].group(0) in exc.original.message))
    if not in_worker and static_finding(ev, CODE) is None:
        return _cuda_tensor_sent(ev)
    if in_worker and not exc.process.startswith(("worker", "child")):
        exc = exc.original  # torch re-raised it in the main process: quote the worker's
        text = "%s: %s" % (exc.type, exc.message)
    diag = Diagnosis(CODE, "certain" if in_worker else "likely",
                     [first_line(text) + (" (raised in %s)" % exc.process if in_worker else "")])
    return locate(diag, ev, None if exc is None else exc)


def _cuda_tensor_sent(ev):
    """A CUDA tensor on the dataset, pickled for the workers: Windows cannot share it."""
    found = find(ev, r"cuda runtime error \(801\)", r"Attempted to send CUDA tensor",
                 r"StorageSharing\.cpp")
    shared = next((exc for exc in ev.all_exceptions()
                   if any(f.func in ("_share_cuda_", "reduce_tensor") for f in exc.frames)
                   and re.search(r"CUDA|cuda", exc.message)), None)
    if not found and shared is None:
        return None
    exc = found[0] if found else shared
    diag = Diagnosis(CODE, "certain", [
        first_line(found[1]) if found else shared.last_line(),
        "a CUDA tensor was being pickled to send it to the workers: the dataset (or collate_fn "
        "or worker_init_fn) holds CUDA tensors"])
    return locate(diag, ev, exc)
