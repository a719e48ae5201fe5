"""DLW104: a name the code a worker runs reads, bound only inside the ``__main__`` guard.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order). A definition of the
guard that a worker must unpickle fails with "Can't get attribute" (the shared pickling
rule reads it); a global that the worker's code reads fails later, in the worker, with
``NameError``, which would otherwise read as an error of the user's code (DLW205).
"""
import ast
import re

from doctor.rulekit import Diagnosis, finding_text, relative, rule, user_frame
from flake8_dlworker.analysis.guarded import first_guarded_store

CODE = "DLW104"
_NOT_DEFINED = re.compile(r"name '(\w+)' is not defined")


@rule(order=125)
def dlw104_guarded_name(ev):
    """A worker's ``NameError`` for a name that the checker found bound only in the
    script's guard and read by code that runs in the worker."""
    for exc in ev.all_exceptions():
        if exc.process == "main" or not exc.type.endswith("NameError"):
            continue
        missing = _NOT_DEFINED.search(exc.message)
        if missing is None:
            continue
        name = missing.group(1)
        finding = next((f for f in ev.static if f["code"] == CODE and (
            " '%s' defined inside the __main__ guard reaches a worker as a name " % name)
            in f["text"]), None)
        frame = user_frame(exc)
        place = ((finding["path"], finding["line"]) if finding is not None
                 else _bound_in_guard(ev, frame, name))
        if place is None:
            continue
        diag = Diagnosis(CODE, "certain", ["%s raised %s" % (exc.process, exc.last_line())])
        if frame is not None:
            diag.evidence.append("raised at %s:%d in %s, which the worker runs" % (
                frame.path, frame.line, frame.func))
        diag.evidence.append("the worker re-imported the script as __mp_main__, which skips "
                             "the __main__ guard, where %r is bound" % name)
        if finding is not None:
            diag.evidence.append(finding_text(finding))
        diag.path, diag.line = place
        return diag
    return None


def _bound_in_guard(ev, frame, name):
    """(path, line) where the guard of the file the worker's error was raised in binds
    ``name`` (the script the worker re-imported), or None. A log's file is read only
    where doctor.sourcefile allows (under the working directory or ``--source``)."""
    from doctor.sourcefile import read_source

    if frame is None or not frame.path.endswith(".py") or ev.source not in ("run", "log"):
        return None
    data, _why = read_source(frame.path, ev.hints.get("source_roots", []) if
                             ev.source == "log" else None)
    try:
        tree = ast.parse(data, frame.path) if data is not None else None
    except (SyntaxError, ValueError):
        return None
    if tree is None:
        return None
    store = first_guarded_store(tree, name)
    return None if store is None else (relative(frame.path), store.lineno)
