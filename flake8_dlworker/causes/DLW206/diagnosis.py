"""DLW206: a loader that hangs.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
import re

from doctor.rulekit import Diagnosis, find, first_line, is_library, locate, rule
from flake8_dlworker.catalog import RULES

CODE = "DLW206"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")


#: a run ended by --timeout counts as stuck when no worker started and no batch came for
#: this long before the end (the stuck worker's stack says where it waits)
STUCK_S = 5.0


@rule(order=140)
def dlw206(ev):
    from doctor.stacks import stuck_thread

    found = find(ev, *SIGNATURES)
    # a run's own dumps are taken on --timeout, when its main process may merely be between
    # batches; a log's dump was taken because the program hung
    stuck = stuck_thread(ev.stacks, is_library, main_waiting=ev.source == "log")
    if found:
        diag = Diagnosis(CODE, "certain", [first_line(found[1])])
    elif ev.outcome == "timeout" or _ended_by_a_signal(ev):
        diag = _stuck_at_timeout(ev, stuck)
    elif stuck is not None:
        diag = Diagnosis(CODE, "likely", [
            "a stack dump%s shows the DataLoader's %s waiting, with no error printed" % (
                " taken by faulthandler's watchdog" if stuck.watchdog else "", stuck.kind)])
    else:
        diag = None
    if diag is None:
        return None
    if stuck is not None:
        diag.evidence.append("the stack of the stuck %s (%s):\n%s" % (
            stuck.kind, _waits_in(stuck), stuck.thread.text()))
        if stuck.frame is not None:
            diag.path, diag.line = stuck.frame
        if stuck.other_threads and stuck.kind == "worker":
            diag.evidence.append(
                "the process that started the workers ran other threads: %s; under fork a "
                "worker inherits every lock one of them held at that moment, held for ever"
                % ", ".join("'%s'" % name for name in stuck.other_threads[:6]))
    for warning in ev.warnings:  # what makes a forked worker deadlock
        if re.search(r"is multi-threaded, use of fork\(\) may lead to deadlocks|"
                     r"^TokenizersWarning: The current process just got forked", warning):
            diag.evidence.append("the workers were forked from a process that already ran "
                                 "threads, a known cause of deadlocks: " + warning[:200])
    return diag if diag.path else locate(diag, ev, found[0] if found else None)


def _ended_by_a_signal(ev):
    """A run the doctor ended because it received SIGINT, SIGTERM or SIGHUP."""
    return ev.source == "run" and ev.outcome == "stopped" and \
        ev.hints.get("stopped_by") == "signal"


def _stuck_at_timeout(ev, stuck):
    """DLW206 from a run ended by --timeout or by a signal to the doctor, only when the
    evidence shows a stuck loader: it had workers, none delivered a batch for STUCK_S
    before the end, and a stack shows where one waits. A run whose batches still flowed,
    whose workers were still starting (spawn re-imports everything each epoch), or that
    had no workers, was cut short."""
    if ev.source != "run" or stuck is None:
        return None
    idle = ev.hints.get("idle_s")
    with_workers = [loader for loader in ev.loaders if loader.get("pids")]
    if not with_workers or idle is None or idle < STUCK_S:
        return None
    ended = ("ended after %gs (--timeout)" % (ev.timeout_s or 0) if ev.outcome == "timeout"
             else "ended by a signal to the doctor")
    return Diagnosis(CODE, "likely", [
        "no DataLoader worker delivered a batch in the last %.0fs before the run was "
        "%s; %d batches had come before" % (idle, ended, ev.hints.get("batches", 0))])


def _waits_in(stuck):
    """The blocking frame, the library call the user's code made to get there, and the
    user's line ("it waits in acquire, logging/__init__.py:917, called through info ...")."""
    frames = stuck.thread.frames
    inner = frames[0]
    busy = (stuck.thread.state or "").startswith("active") and not is_library(inner[0])
    words = "it %s in %s, %s:%d" % ("is busy" if busy else "waits", inner[2], inner[0], inner[1])
    users = [i for i, f in enumerate(frames) if not is_library(f[0])]
    if users and users[0] > 1:
        call = frames[users[0] - 1]
        words += ", called through %s, %s:%d" % (call[2], call[0], call[1])
    if users and users[0] > 0:
        words += ", from the user's code at %s:%d" % frames[users[0]][:2]
    return words
