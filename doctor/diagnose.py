"""Evidence -> ordered diagnoses: one small rule per cause, the root cause first.

Each rule reads the evidence record and returns a Diagnosis or None: a cause's own
rules are its folder's ``diagnosis.py`` (found by the catalog), the rules of several
causes (pickling) are here, and each one's ``@rule(order=N)`` places it. The rules are
tried in the order in which the failures happen in a run (construction, pickling
in the parent, the child's bootstrap, the worker's own code, signals, hangs), so
the first that holds is the root cause; what it explains (the generic "exited
unexpectedly", BrokenPipe, EOFError) is folded into its evidence.  Static findings
of other codes follow as separate, lower-confidence diagnoses.
"""
import importlib
import os
import re

from doctor.rulekit import (  # noqa: F401 (the names the rest of the doctor reads here)
    MEMORY_UNEXPLAINED, Diagnosis, deepest_user_frame, finding_text, is_library, relative,
    rule, user_frame)
from doctor.rulekit import find, first_line, locate, signame, static_finding
from flake8_dlworker import catalog
from flake8_dlworker.catalog import RULES


def _pickle_texts():
    """(code, signatures) of the causes the pickling rule names, in their records' order
    (``pickle_order``)."""
    return [(code, RULES[code].texts("signatures")) for code in catalog.ordered("pickle_order")]


@rule(order=30)
def pickling(ev):
    """The causes of an object a worker cannot receive (the records with a
    ``pickle_order``): what the probe found unpicklable, or the error text."""
    if ev.probe:
        culprit = ev.probe[0]
        code = (culprit.get("code") or _code_from_text(culprit.get("error", ""))
                or catalog.ordered("pickle_order")[-1])
        diag = Diagnosis(code, "certain", [
            "pickle probe before the workers started: %s" % culprit["describe"],
            "pickling it fails with %s" % culprit["error"]])
        found = find(ev, *[p for _, patterns in _pickle_texts() for p in patterns])
        if found and first_line(found[1]) != culprit["error"]:
            diag.evidence.append("the run then printed: %s" % first_line(found[1]))
        finding = static_finding(ev, code)
        if RULES[code].field("pickle_kind") == "handle" and culprit.get("assigned_line"):
            if finding is None or not culprit.get("assigned_parameter"):
                return _at_assignment(diag, ev, culprit, finding)
            diag.evidence.append("%s is kept as self.%s from the parameter %s of %s() "
                                 "at %s:%d: its caller made it" % (
                                     culprit["path"], culprit["attribute"],
                                     culprit["assigned_parameter"], culprit["assigned_in"],
                                     relative(culprit["assigned_file"]),
                                     culprit["assigned_line"]))
        if finding is None and culprit.get("file") and culprit.get("line"):
            diag.path, diag.line = culprit["file"], culprit["line"]
            return diag
        return locate(diag, ev, found[0] if found else None)
    for code, patterns in _pickle_texts():
        found = find(ev, *patterns)
        if found:
            exc, text, _ = found
            where = ""
            if exc and exc.process != "main":
                where = " (printed by a %s process)" % exc.process
            diag = Diagnosis(code, "certain" if static_finding(ev, code) else "likely",
                             [first_line(text) + where])
            if exc is not None and exc.process == "queue feeder thread":
                diag.evidence.append(
                    "a worker returned a sample that cannot be pickled: its queue's feeder "
                    "thread failed to send it, so that batch never reaches the main process "
                    "(return tensors, arrays or plain data from __getitem__ and collate_fn)")
            _pickle_notes(diag, text)
            diag = locate(diag, ev, exc)
            main = re.search(r"<module '__mp_main__' from '([^']+)'>", text)
            if static_finding(ev, code) is None:
                _at_definition(diag, ev, text, main.group(1) if main else None)
            if diag.path is None and deepest_user_frame(ev) is None and main:
                diag.path = main.group(1)  # the script the child could not find it in
            return diag
    return None


def _at_assignment(diag, ev, culprit, finding):
    """A handle's diagnosis at the line that keeps it: ``self.fh = open(p)`` where the
    probe's attribute path (``dataset.reader.fh``) is assigned, with the loader that
    hands it to its workers (and the static finding, where it names another line). Not
    for a handle the class only keeps from its caller (``self.db = db``) where the
    checker names the line that made it."""
    diag.path, diag.line = culprit["assigned_file"], culprit["assigned_line"]
    diag.evidence.append("%s is kept as self.%s, assigned at %s:%d in %s()" % (
        culprit["path"], culprit["attribute"], relative(culprit["assigned_file"]),
        culprit["assigned_line"], culprit.get("assigned_in") or "a method"))
    for loader in ev.loaders:
        if loader.get("key") == culprit.get("key") and loader.get("line"):
            diag.evidence.append("the DataLoader made at %s:%d hands it to its %s workers" % (
                relative(loader["path"]), loader["line"], loader.get("num_workers")))
    if finding is not None and (
            finding["line"] != diag.line or finding.get("cell") is not None
            or os.path.realpath(finding["path"]) != os.path.realpath(diag.path)):
        diag.evidence.append(finding_text(finding))
    return diag


def _at_definition(diag, ev, text, main_script):
    """Point at the definition of the object the message names, when its file is here."""
    from doctor.definitions import find_definition

    files = [main_script] if main_script else []
    for exc in ev.all_exceptions():
        for frame in reversed(exc.frames):
            if not is_library(frame.path) and frame.path not in files:
                files.append(frame.path)
    found = find_definition(text, files[:8], _source_roots(ev))
    if found:
        diag.path, diag.line = found
        diag.evidence.append("the object is defined at %s:%d" % (relative(found[0]), found[1]))


def _source_roots(ev):
    """The folders whose files may be read: a log's paths are untrusted (doctor.sourcefile)."""
    return ev.hints.get("source_roots", []) if ev.source == "log" else None


#: the worker Process's args tuple (torch/utils/data/dataloader.py): which item is what
_WORKER_ARGS = {1: "the dataset", 6: "collate_fn", 9: "worker_init_fn"}


def _pickle_notes(diag, text):
    """Python 3.14's pickle notes name the path to the culprit inside the worker args."""
    notes = re.findall(r"^when serializing (.+)$", text, re.M)
    if not notes:
        return
    diag.evidence.append("pickle notes: " + " <- ".join(notes))
    for note in reversed(notes):  # outermost first
        item = re.match(r"tuple item (\d+)$", note)
        if item and "_args" in text:
            what = _WORKER_ARGS.get(int(item.group(1)))
            if what:
                diag.evidence.append("the object that failed is reached from %s "
                                     "(item %s of the worker's arguments)" % (what, item.group(1)))
            break


def _code_from_text(text):
    for code, patterns in _pickle_texts():
        if any(re.search(pattern, text) for pattern in patterns):
            return code
    return None


def generic(ev):
    """Only the generic last line: the likely causes, each ``possible``."""
    found = find(ev, r"DataLoader worker \(pid\(s\) [\d, ]+\) exited unexpectedly",
                 r"BrokenPipeError: \[Errno 32\]", r"EOFError: Ran out of input",
                 r"\[WinError 5\] Access is denied")
    if not found:
        return []
    line = first_line(found[1])
    script = "SCRIPT"
    for exc in ev.all_exceptions():
        frame = user_frame(exc)
        if frame is not None and frame.path.endswith(".py"):
            script = relative(frame.path)
            break
    # what a bare "exited unexpectedly" can mean (the records' ``generic``), most common
    # first; on Windows no OOM killer and no /dev/shm, the commit limit instead
    family = "windows" if (ev.hints.get("os") or ev.host.get("os") or "").startswith(
        "Windows") else "posix"
    causes = catalog.flagged("generic") + catalog.flagged("generic", family)
    return [Diagnosis(code, "possible", [
        "the log holds only the generic symptom, not the error that caused it: %s" % line,
        "run the script under the doctor to see which: python -m doctor %s" % script])
        for code in causes]


def unexplained(ev):
    """A run that crashed with nothing above to explain it: say what was seen, so that
    the crash is still reported as a failure."""
    if ev.source != "run" or ev.outcome != "crashed":
        return None
    code = ev.exit_code
    if code is not None and code > 128:
        seen = "the main process was killed by %s (exit status %d)" % (signame(code - 128), code)
    else:
        seen = "the script exited with status %s" % code
    diag = Diagnosis("DLW208", "possible", [seen])
    last = ev.exceptions[-1] if ev.exceptions else None
    if last is not None:
        diag.evidence.append("the last error printed: %s (%s)" % (last.last_line()[:300],
                                                                  last.process))
        frame = user_frame(last)
        if frame is not None:
            diag.path, diag.line = frame.path, frame.line
    if code == 128 + 9:
        diag.evidence.append("SIGKILL without a traceback is most often the out-of-memory "
                             "killer, a job scheduler, or the script killing itself")
    return diag


_ORDERED = []


def rules():
    """Every diagnosis rule, in its order: the causes' own (their ``diagnosis.py``,
    imported on first use) and the shared ones above."""
    if not _ORDERED:
        found = [pickling]
        for code in catalog.having("diagnosis"):
            module = importlib.import_module(catalog.module(code, "diagnosis"))
            found.extend(f for f in vars(module).values()
                         if callable(f) and hasattr(f, "order")
                         and (getattr(f, "__module__", None) == module.__name__
                              or getattr(f, "code", None) == code))
        orders = [f.order for f in found]
        if len(set(orders)) != len(orders):
            raise ValueError("two diagnosis rules have the same order: %s" % sorted(orders))
        _ORDERED.extend(sorted(found, key=lambda f: f.order))
    return list(_ORDERED)


def diagnose(ev):
    """The root cause first, then static findings of other codes."""
    found = []
    for rule_of in rules():
        diag = rule_of(ev)
        if diag is not None:
            found.append(diag)
            break
    ruled = bool(found)
    if not found:
        found = generic(ev)
    if not found:
        found = [diag for diag in [unexplained(ev)] if diag is not None]
    if found and ev.source == "run":  # a distributed run: the rank it happened in
        from doctor import ranks

        ranks.attribute(ev, found[0])
    if found and found[0].path is None:
        frame = deepest_user_frame(ev)
        for diag in found if found[0].confidence == "possible" else found[:1]:
            if diag.path is None and frame is not None:
                diag.path, diag.line = frame.path, frame.line
    if ruled and ev.source == "run":
        for loader in ev.loaders:
            if loader.get("overrode"):
                found[0].evidence.append(
                    "the DataLoader at %s:%s asked for multiprocessing_context=%r; the doctor "
                    "forced %s, as on Windows and macOS" % (
                        relative(loader["path"]), loader["line"], loader["overrode"],
                        ev.start_method))
    codes = {d.code for d in found}
    for finding in ev.static:
        if RULES[finding["code"]].flag("secondary") and finding["code"] not in codes:
            codes.add(finding["code"])
            found.append(Diagnosis(
                finding["code"], "likely" if ev.source == "run" else "possible",
                [finding_text(finding)], path=finding["path"], line=finding["line"],
                cell=finding.get("cell")))
    for diag in found:
        if diag.path:
            diag.path = relative(diag.path)
    return found
