"""DLW203: a worker's crash in native code.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
import re

from doctor.rulekit import (
    Diagnosis, find, first_line, locate, rule, signame, user_fault_frame, worker_with_signal,
    worker_words)
from flake8_dlworker.catalog import RULES

CODE = "DLW203"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")


#: macOS aborts a forked child that touches an Objective-C class another thread was
#: initialising (libobjc's fork safety)
_OBJC_FORK = r"may have been in progress in another thread when fork\(\) was called"


@rule(order=80)
def dlw203(ev):
    worker = worker_with_signal(ev, "SIGSEGV", "SIGABRT", "SIGFPE", "SIGILL")
    found = find(ev, *SIGNATURES)  # the last one is _OBJC_FORK
    if worker is None and not found:
        return None
    diag = Diagnosis(CODE, "certain", [])
    objc = find(ev, _OBJC_FORK)
    if objc:
        diag.evidence.append(
            "macOS's Objective-C runtime aborted a worker started with fork (its fork "
            "safety check): start the workers with spawn, the macOS default: %s"
            % first_line(objc[1])[:200])
    if worker is not None:
        diag.evidence.append("%s was killed by signal %d (%s)" % (
            worker_words(worker), worker.signal, signame(worker.signal)))
    if found:
        diag.evidence.append(first_line(found[1]))
    stack = _crash_stack(ev)
    if stack:
        diag.evidence.append("the worker's stack when it crashed:\n" + stack)
        frame = user_fault_frame(stack)
        if frame:
            diag.path, diag.line = frame
    return diag if diag.path else locate(diag, ev, found[0] if found else None)


def _crash_stack(ev):
    for stack in ev.stacks:
        if stack.startswith("Fatal Python error"):
            return _user_thread(stack) or stack
    return None


def _user_thread(stack, in_worker=False):
    """Of a faulthandler dump, the first thread block that runs the user's code
    (in a DataLoader worker, if asked), without the list of extension modules."""
    header = stack.split("\n", 1)[0] if stack.startswith("Fatal Python error") else None
    blocks = re.split(r"\n(?=(?:Current thread|Thread) 0x)", stack)
    for block in blocks:
        block = block.split("\nExtension modules:", 1)[0].strip()
        if not block.startswith(("Current thread", "Thread")):
            continue
        if in_worker and "_worker_loop" not in block:
            continue
        if user_fault_frame(block):
            return (header + "\n" + block) if header else block
    return None
