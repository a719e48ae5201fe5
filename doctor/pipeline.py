"""One path from a target to its diagnoses and its proved fix.

:func:`examine` is what every run of the doctor does (a script, ``-m MODULE``, a
notebook, each run of ``--compare``; ``--verify`` and ``--apply`` on top), and
:func:`examine_log` what ``explain`` does with a log. Their stages each return what
they make:

1. :func:`observe`: the target runs under :class:`doctor.supervisor.Run`; its evidence;
2. :func:`static_of`: the checker's findings on the target's file;
3. :func:`diagnosed`: the diagnoses, the one call of :func:`doctor.diagnose.diagnose`
   (``explain`` comes here too, with the evidence of a log);
4. the fix: each diagnosis' patch (:func:`doctor.patches.workflow.propose`), the
   combined fix in rounds (:class:`doctor.patches.rounds.Rounds`) re-run in a copy of
   the folder (:func:`trial`, :mod:`doctor.sandbox`) until it converges
   (:func:`converge`); a notebook's fix is proved the same way (:func:`fix_notebook`);
5. with ``--apply``, the writing (:mod:`doctor.patches.write`).

After a signal to the doctor nothing more is run and nothing is written: the fixes are
only proposed, and a re-run cut short proves nothing (:func:`doctor.patches.rounds.ran_through`).
"""
import importlib
import os
import tempfile
import threading

from doctor import keeper, notebook_run, sandbox, signals
from doctor.agent import OWN
from doctor.patches import write

# the patch makers (libcst) are imported by the fix stage when it has work, not by
# every run


class Options:
    """What :func:`examine` does with its target: the run options of the command line;
    ``fix`` False only proposes patches (``--compare``); ``stdout`` takes the target's
    output, ``out`` the lines that say what was written; ``max_rounds`` None is
    :data:`doctor.patches.rounds.MAX_ROUNDS`."""

    def __init__(self, start_method="spawn", timeout=None, max_batches=None, verify=False,
                 apply=False, force=False, max_rounds=None, fix=True, stdout=None,
                 show_status=False, out=None):
        self.start_method, self.timeout, self.max_batches = start_method, timeout, max_batches
        self.verify, self.apply, self.force = verify, apply, force
        self.max_rounds, self.fix = max_rounds, fix
        self.stdout, self.show_status, self.out = stdout, show_status, out


class Result:
    """What :func:`examine` found: the evidence, the diagnoses (their patches and
    ``verified`` set), the rounds of a script's fix, and whether a write failed."""

    def __init__(self, ev, diagnoses, rounds=None, failed=False):
        self.ev, self.diagnoses, self.rounds, self.failed = ev, diagnoses, rounds, failed


def examine(target, options, path=None):
    """Run ``target`` ([SCRIPT, *ARGS], ["-m", MODULE, *ARGS] or [NOTEBOOK]; ``path``:
    its file), diagnose it, and make, prove and write its fix as ``options`` ask.
    Raises :class:`doctor.notebook_run.NotRunnable` for a notebook that cannot run."""
    path = path or target[0]
    book = notebook_run.check(path) if notebook_run.is_notebook(path) else None
    beside = []
    if book is None and options.start_method != OWN:
        # the checker reads the text that runs and works while it runs, off the
        # critical path (the start method is known before the run); it starts once the
        # target has, so that the target's start does not wait for it
        source = _read(path)
        ev = observe(target, options, lambda: beside.append(
            Beside(_beside_the_run, path, options.start_method, source)))
    else:
        ev = observe(target, options)
    method = ev.start_method if options.start_method == OWN else options.start_method
    ev.static = beside[0].result() if beside else static_of(path, method, book)
    diagnoses = diagnosed(ev)
    result = Result(ev, diagnoses)
    if book is not None:
        notebook_run.to_cells(path, book, ev, diagnoses)
        if options.fix and signals.received() is None:
            result.failed = fix_notebook(path, diagnoses, options)
    elif options.fix and signals.received() is None:
        result.rounds, result.failed = fix_script(ev, diagnoses, target, options)
    else:  # after a signal, or --compare: nothing more is run and no file is written
        from doctor.patches.workflow import propose

        propose(ev, diagnoses, method)
    return result


def examine_log(ev, start_method):
    """``explain``: the diagnoses of a log's evidence (:func:`doctor.explain.explain`),
    with patches, proposed only, for the files the log names that may be read here."""
    from doctor.sourcefile import inside, read_source

    diagnoses = diagnosed(ev)
    roots = ev.hints["source_roots"]
    readable = [d for d in diagnoses if d.path and read_source(d.path, roots)[0] is not None]
    if readable:
        from doctor.patches.workflow import propose

        for root in roots:
            propose(ev, [d for d in readable if inside(d.path, roots) == root],
                    start_method, cwd=root)
    return diagnoses


# -- the stages -------------------------------------------------------------------------

def observe(argv, options, on_start=None):
    """The evidence of one run of ``argv`` (``on_start``: called once it started)."""
    from doctor.supervisor import Run

    return Run(argv, start_method=options.start_method, timeout=options.timeout,
               max_batches=options.max_batches, stdout=options.stdout,
               show_status=options.show_status, on_start=on_start).run()


#: what the stages after a run import: loaded beside the run, while the target works,
#: instead of after it, when the user waits
AFTER_THE_RUN = ("doctor.diagnose", "doctor.explain", "doctor.patches.rounds",
                 "doctor.patches.workflow")


def _beside_the_run(path, start_method, source):
    """The checker's findings on the script, then the modules of the stages to come."""
    found = static_of(path, start_method, None, source)
    for name in AFTER_THE_RUN:
        importlib.import_module(name)
    return found


def static_of(path, start_method, book=None, source=None):
    """The checker's findings on ``path`` (a notebook's, read as ``book``, at the lines
    of its script; ``source``: the file's bytes, read already)."""
    if book is not None:
        return notebook_run.static_findings(path, book, start_method)
    from doctor.static import static_findings

    return static_findings(path, start_method, source=source)


def _read(path):
    """The bytes of ``path``; None when it cannot be read (the checker then says so)."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


class Beside:
    """``function(*args)`` in a thread of its own; :meth:`result` waits for it and
    returns its value or raises its exception, as a plain call would."""

    def __init__(self, function, *args):
        self._value = self._error = None
        self._thread = threading.Thread(target=self._call, args=(function, args),
                                        daemon=True)
        self._thread.start()

    def _call(self, function, args):
        try:
            self._value = function(*args)
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def result(self):
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def diagnosed(ev):
    """The diagnoses of a run's evidence, or of a log's (each crash of it on its own:
    :func:`doctor.explain.log_parts`)."""
    from doctor import explain
    from doctor.diagnose import diagnose

    parts = explain.log_parts(ev) if ev.source == "log" else [ev]
    found = [diagnose(part) for part in parts]
    return explain.diagnose_log(ev, found) if ev.source == "log" else found[0]


# -- the fix ----------------------------------------------------------------------------

def fix_script(ev, diagnoses, target, options):
    """Each diagnosis' own patch, then the combined fix of them all, re-run in rounds
    with --verify and --apply, then written with --apply: (the rounds, whether a write
    failed)."""
    from doctor.patches.rounds import Rounds
    from doctor.patches.workflow import VERIFY_TIMEOUT_S, propose, verify_batches

    method = options.start_method
    propose(ev, diagnoses, method)
    if options.verify or (options.apply and not options.force):
        batches = verify_batches(ev, options.max_batches)
        timeout = options.timeout or VERIFY_TIMEOUT_S
        rounds = converge(ev, diagnoses, target, method, options.max_rounds, batches, timeout)
        _note_rounds(rounds, diagnoses, method, batches, timeout)
    else:
        rounds = Rounds()
        rounds.fix(ev, diagnoses, method)
    if rounds.files:
        ev.fix = rounds.to_json()
    failed = False
    if options.apply:
        failed = write.write_fix(rounds.files, rounds.passed, diagnoses, options.force,
                                 options.out)
    return rounds, failed


def converge(ev, diagnoses, target, start_method="spawn", max_rounds=None,
             max_batches=2, timeout=120.0, cwd=None):
    """Rounds of fix and re-run, at most ``max_rounds`` re-runs (None:
    :data:`doctor.patches.rounds.MAX_ROUNDS`); the :class:`doctor.patches.rounds.Rounds`."""
    from doctor.patches.rounds import MAX_ROUNDS, Rounds, ran_through

    max_rounds = max_rounds or MAX_ROUNDS
    rounds = Rounds(cwd)
    if not rounds.fix(ev, diagnoses, start_method):
        return rounds
    if not target or target[0] == "-m":
        return rounds  # re-runs are made for a SCRIPT
    folder = os.path.dirname(os.path.realpath(target[0]))
    for _ in range(max_rounds):
        ev, diagnoses = rerun(rounds.files, folder, target, start_method, max_batches,
                              timeout)
        if ev is None:
            rounds.passed = False
            return rounds
        if signals.received() is not None:  # the re-run was cut short: nothing is proved
            rounds.passed = False
            rounds.rounds.append({"round": len(rounds.rounds) + 1, "outcome": ev.outcome,
                                  "diagnoses": [], "fixed": [],
                                  "note": "cut short: the doctor received %s"
                                          % signals.name(signals.received())})
            break
        rounds.passed = ran_through(ev) and not [
            d for d in diagnoses if d.confidence == "certain"]
        if rounds.passed:
            rounds.rounds.append({"round": len(rounds.rounds) + 1, "outcome": ev.outcome,
                                  "diagnoses": [d.code for d in diagnoses], "fixed": []})
            break
        if not rounds.fix(ev, diagnoses, start_method):
            break
    rounds.last = (ev, diagnoses)
    return rounds


def rerun(files, folder, target, start_method, max_batches, timeout):
    """Run a copy of ``folder`` with the fixed texts of ``files`` (path -> FileFix);
    (evidence, diagnoses) with paths in the user's folder again. (None, None) when a
    fixed file lies outside it, or its place in the copy would (through a link)."""
    keep = set()
    for path in files:
        real = os.path.realpath(path)
        if os.path.commonpath([folder, real]) != folder:
            return None, None
        keep |= sandbox.folders_above(real, folder)
    try:
        ev, diagnoses = trial(folder, {path: fixed.after for path, fixed in files.items()},
                              {}, target, start_method, max_batches, timeout, keep, "rounds")
    except sandbox.NotACopy:  # the fixed file's place in the copy leads out of it
        return None, None
    ev.target = target[0]
    return ev, diagnoses


def trial(folder, texts, new, target, start_method, max_batches, timeout, keep=(),
          kind="verify"):
    """Run ``target`` in a copy of ``folder`` (:class:`doctor.sandbox.Copy`) where the
    user's files ``texts`` (path -> text) are replaced and the files ``new`` are
    created; (evidence, diagnoses), with the copy's paths turned back into the user's.
    A re-run that wrote through a link to an original is marked so: it proves nothing."""
    with tempfile.TemporaryDirectory(prefix=keeper.folder_prefix(kind)) as tmp:
        copy = os.path.join(tmp, os.path.basename(folder) or "script")
        copied = sandbox.Copy(folder, copy, keep)
        for path, text in texts.items():
            copied.put(path, text)
        for path, text in new.items():
            copied.put(path, text, new=True)
        script = copied.place(target[0])
        originals = copied.watch()
        with open(os.devnull, "w") as sink:
            ev = observe([script, *target[1:]], Options(start_method, timeout, max_batches,
                                                        stdout=sink))
        wrote = sandbox.changed(originals)
        if wrote:
            ev.hints["wrote_through_links"] = wrote
        book = notebook_run.read(script) if notebook_run.is_notebook(script) else None
        ev.static = static_of(script, start_method, book)
        real_copy = os.path.realpath(copy)

        def back(path):
            if not path:
                return path
            real = os.path.realpath(path)
            if os.path.commonpath([real_copy, real]) != real_copy:
                return path
            return os.path.join(folder, os.path.relpath(real, real_copy))
        for culprit in ev.probe:
            for key in ("file", "owner_file", "assigned_file"):
                culprit[key] = back(culprit.get(key))
        for finding in ev.static:
            finding["path"] = back(finding["path"])
        diagnoses = diagnosed(ev)
        for diag in diagnoses:
            diag.path = back(os.path.abspath(diag.path)) if diag.path else diag.path
    return ev, diagnoses


def _note_rounds(rounds, diagnoses, start_method, max_batches, timeout):
    """Each diagnosis: verified by the last re-run of the combined fix, and what it showed."""
    if rounds.last is None:
        return
    ev, found = rounds.last
    codes = sorted({d.code for d in found if d.confidence == "certain"})
    for diag in diagnoses:
        gone = diag.code not in codes
        diag.verified = bool(rounds.passed and gone)
        diag.evidence.append(
            "re-run of the patched copy under %s (--max-batches %d, --timeout %gs) after "
            "%d round(s) of the combined fix: outcome %s, exit code %s, %d batch(es); %s%s" % (
                start_method, max_batches, timeout,
                sum(1 for r in rounds.rounds if r["fixed"]), ev.outcome,
                ev.exit_code, ev.hints.get("batches", 0),
                "%s is gone" % diag.code if gone else "%s is still there" % diag.code,
                "; now diagnosed: %s" % ", ".join(codes) if codes else ""))


def fix_notebook(path, diagnoses, options):
    """The notebook's fix (:func:`doctor.notebook_run.proposal`); with --verify (or
    --apply) a patched copy of its folder is run, with --apply both files are written.
    True when a write failed."""
    made = notebook_run.proposal(path, diagnoses, options.start_method)
    if made is None:
        return False
    fixed, diag = made
    if options.verify or (options.apply and not options.force):
        verify_notebook(fixed, diag, options.start_method, options.timeout)
    if options.apply:
        return not write.write_notebook(fixed, diag, options.force, options.out)
    return False


def verify_notebook(fixed, diag, start_method, timeout=None):
    """Run a patched copy of the notebook's folder; ``verified`` when it passes (or
    stops after its batches) and nothing certain is diagnosed."""
    from doctor.patches.rounds import ran_through
    from doctor.patches.workflow import VERIFY_BATCHES, VERIFY_TIMEOUT_S

    folder = os.path.dirname(os.path.realpath(fixed.path))
    timeout = timeout or VERIFY_TIMEOUT_S
    try:
        ev, found = trial(folder, {fixed.path: fixed.after},
                          {fixed.module_path: fixed.module_text}, [fixed.path], start_method,
                          VERIFY_BATCHES, timeout)
    except sandbox.NotACopy:
        diag.verified = False
        diag.evidence.append("not verified: the copy of %s would not be a copy" % fixed.path)
        return False
    codes = sorted({d.code for d in found if d.confidence == "certain"})
    diag.verified = ran_through(ev) and not codes
    diag.evidence.append(
        "re-run of the patched notebook under %s (--max-batches %d, --timeout %gs): "
        "outcome %s, %d batch(es)%s" % (
            start_method, VERIFY_BATCHES, timeout, ev.outcome, ev.hints.get("batches", 0),
            "; now diagnosed: %s" % ", ".join(codes) if codes else ""))
    return diag.verified
