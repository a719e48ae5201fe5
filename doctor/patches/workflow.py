"""From diagnoses to patches, a re-run that proves them, and writing them.

- :func:`propose`: each diagnosis whose file lies under the working directory gets
  ``patch`` (a unified diff) from its maker; nothing is written.
- :func:`verify`: the script's folder is copied to a temporary tree (Python files
  copied, everything else linked), the fixed source written there, and the copy re-run
  through :class:`doctor.supervisor.Run` with the same start method, a bounded
  ``--max-batches`` and a timeout. ``verified`` is true only when the diagnosis' code
  is gone and the run passed or was stopped after its batches.
- :func:`apply`: writes verified patches (all with ``force``) in place, atomically,
  keeping a backup next to the file; never outside the working directory.
"""
import os
import sys
import tempfile

from doctor import keeper, sandbox, signals
from doctor.patches import fixed_source, unified_diff, write
from doctor.patches.rounds import MAX_ROUNDS, Rounds, converge, ran_through, requests_for

_GIB = 1024 ** 3
#: batches per loader in the re-run beyond those the first run delivered before it
#: crashed: enough to start every worker and load from it, and to pass the point where
#: the first run died (a crash that needs many batches, such as DLW204, is reached)
VERIFY_BATCHES = 2
VERIFY_TIMEOUT_S = 120.0


def under_cwd(path, cwd=None):
    """True when ``path`` resolves to a file inside the working directory."""
    cwd = os.path.realpath(cwd or os.getcwd())
    real = os.path.realpath(path)
    try:
        return os.path.commonpath([cwd, real]) == cwd and real != cwd
    except ValueError:  # another drive
        return False


def facts_for(code, ev):
    """Runtime measurements a maker needs (DLW201: memory per worker and available)."""
    if code != "DLW201" or ev is None:
        return {}
    peaks = [w.peak_rss_gb for w in ev.workers if w.peak_rss_gb]
    workers = [loader.get("num_workers") for loader in ev.loaders if loader.get("num_workers")]
    facts = {}
    if peaks:
        facts["peak_rss_gb"] = max(peaks)
    if workers:
        facts["num_workers"] = max(workers)
    from doctor.available import available_bytes

    # measured after the run ended: what the workers may share, the script's own aside
    available = available_bytes()
    if available is not None:
        facts["available_gb"] = available / _GIB
    return facts


class Proposal:
    """One diagnosis' fix: the file, its text before and after."""

    def __init__(self, diag, path, before, after):
        self.diag, self.path, self.before, self.after = diag, path, before, after


def propose(ev, diagnoses, start_method="spawn", cwd=None):
    """Set ``patch`` on every diagnosis that has a safe fix; the proposals, in order."""
    proposals = []
    seen = set()
    for diag in diagnoses:
        if not diag.path or not under_cwd(diag.path, cwd) or not diag.path.endswith(".py"):
            continue
        if (diag.code, diag.path) in seen:
            continue
        seen.add((diag.code, diag.path))
        try:
            with open(diag.path, "r", encoding="utf-8", newline="") as handle:
                before = handle.read()
        except (OSError, UnicodeDecodeError):
            continue
        rel = os.path.relpath(os.path.realpath(diag.path), os.path.realpath(cwd or os.getcwd()))
        try:
            after = fixed_source(diag.code, rel, before, diag.line, facts_for(diag.code, ev),
                                 start_method)
        except Exception:
            if os.environ.get("DLW_DOCTOR_DEBUG"):
                raise
            after = None
        if after is None:
            after = _from_evidence(ev, diag, before, start_method, cwd)
        if after is None:
            continue
        diag.patch = unified_diff(rel.replace(os.sep, "/"), before, after)
        proposals.append(Proposal(diag, diag.path, before, after))
    return proposals


def _from_evidence(ev, diag, before, start_method, cwd):
    """The diagnosis' file fixed at the sites the run named for its code, or None."""
    from doctor.patches.combine import fix_file

    path = os.path.abspath(diag.path)
    asked = [r for r in requests_for(ev, [diag], cwd)
             if r.code == diag.code and r.path == path]
    if not any(r.site is not None for r in asked):
        return None
    fixed = fix_file(path, before, asked, start_method)
    return fixed.after if fixed.changed else None


# -- verify ---------------------------------------------------------------------------

def verify(proposal, target, start_method="spawn", max_batches=VERIFY_BATCHES,
           timeout=VERIFY_TIMEOUT_S, cwd=None):
    """Re-run a patched copy; sets ``verified`` and adds what the re-run showed."""
    from doctor.diagnose import diagnose
    from doctor.static import static_findings
    from doctor.supervisor import Run

    diag = proposal.diag
    if not target or target[0] == "-m":
        diag.verified = False
        diag.evidence.append("not verified: re-runs are made for a SCRIPT, not -m MODULE")
        return False
    script = os.path.realpath(target[0])
    folder = os.path.dirname(script)
    patched = os.path.realpath(proposal.path)
    if os.path.commonpath([folder, patched]) != folder:
        diag.verified = False
        diag.evidence.append("not verified: %s lies outside the script's folder" % proposal.path)
        return False
    with tempfile.TemporaryDirectory(prefix=keeper.folder_prefix("verify")) as tmp:
        copy = os.path.join(tmp, os.path.basename(folder) or "script")
        copied = sandbox.Copy(folder, copy, sandbox.folders_above(patched, folder))
        try:
            copied_file = copied.put(patched, proposal.after)
        except sandbox.NotACopy:
            diag.verified = False
            diag.evidence.append("not verified: the copy of %s would not be a copy"
                                 % proposal.path)
            return False
        copied_script = copied.place(script)
        originals = copied.watch()
        with open(os.devnull, "w") as sink:
            ev = Run([copied_script, *target[1:]], start_method=start_method,
                     timeout=timeout, max_batches=max_batches, stdout=sink).run()
        ev.static = static_findings(copied_file, start_method)
        codes = sorted({d.code for d in diagnose(ev)})
    wrote = sandbox.changed(originals)
    gone = diag.code not in codes
    ok = gone and ran_through(ev) and not wrote
    if wrote:
        diag.evidence.append("not verified: the re-run wrote to %s, which the copy reads "
                             "through a link (too large to copy)" % ", ".join(wrote))
    diag.verified = ok
    diag.evidence.append(
        "re-run of the patched copy under %s (--max-batches %d, --timeout %gs): outcome %s, "
        "exit code %s, %d batch(es); %s%s" % (
            start_method, max_batches, timeout, ev.outcome, ev.exit_code,
            ev.hints.get("batches", 0),
            "%s is gone" % diag.code if gone else "%s is still there" % diag.code,
            "; now diagnosed: %s" % ", ".join(codes) if codes else ""))
    return ok


# -- apply ----------------------------------------------------------------------------

class ApplyError(Exception):
    pass


def apply(proposal, force=False, cwd=None):
    """Write one proposal in place (:mod:`doctor.patches.write`); returns the backup's
    path. Raises ApplyError, whose text starts with "not written:"."""
    path = proposal.path
    if not under_cwd(path, cwd):
        raise ApplyError("not written: %s lies outside the working directory" % path)
    if not (proposal.diag.verified or force):
        raise ApplyError("not written: %s: the %s patch was not verified (--force writes it)"
                         % (path, proposal.diag.code))
    try:
        return write.replace_checked(path, proposal.before, proposal.after)
    except write.NotWritten as exc:
        raise ApplyError(str(exc))


def _create(path, shown, text, out):
    """Write a file the fix creates (inside the working directory only); True if done."""
    if not under_cwd(path):
        print("doctor: not written: %s lies outside the working directory" % shown, file=out)
        return False
    try:
        write.create(path, text)
    except write.NotWritten as exc:
        print("doctor: %s" % exc, file=out)
        return False
    except OSError as exc:
        print("doctor: not written: %s: %s" % (shown, exc.strerror or exc), file=out)
        return False
    print("doctor: wrote %s (a new file)" % shown, file=out)
    return True


def verify_batches(ev, max_batches=None):
    """The re-run's --max-batches: the user's, else past the point the first run reached."""
    if max_batches:
        return max_batches
    return VERIFY_BATCHES + int((ev.hints.get("batches") if ev is not None else 0) or 0)


def run_all(ev, diagnoses, target=None, start_method="spawn", do_verify=False,
            do_apply=False, force=False, out=None, max_batches=None, timeout=None,
            max_rounds=MAX_ROUNDS):
    """The CLI's one call: each diagnosis' own patch, then the combined fix of them all
    (re-run in rounds with --verify and --apply, then written with --apply)."""
    out = out or sys.stderr
    proposals = propose(ev, diagnoses, start_method)
    if do_verify or (do_apply and not force):
        rounds = converge(ev, diagnoses, target, start_method, max_rounds,
                          verify_batches(ev, max_batches), timeout or VERIFY_TIMEOUT_S)
        _note_rounds(rounds, diagnoses, start_method, verify_batches(ev, max_batches),
                     timeout or VERIFY_TIMEOUT_S)
    else:
        rounds = Rounds()
        rounds.fix(ev, diagnoses, start_method)
    if ev is not None and rounds.files:
        ev.fix = rounds.to_json()
    failed = missing = False
    if do_apply and signals.received() is not None:
        print("doctor: not written: the doctor received %s before the fix was proved"
              % signals.name(signals.received()), file=out)
        return proposals, True
    if do_apply:
        # the files a fix creates first: a file changed to import from one never
        # points at a module that is not there
        for path, fixed in sorted(rounds.files.items(), key=lambda i: (not i[1].created, i[0])):
            if not fixed.changed:
                continue
            shown = relative_path(path)
            if signals.received() is not None:
                print("doctor: not written: %s: the doctor received %s" % (
                    shown, signals.name(signals.received())), file=out)
                failed = True
                continue
            if fixed.created:
                if not (rounds.passed or force):
                    print("doctor: not written: %s: the fix that creates it was not "
                          "verified (--force writes it)" % shown, file=out)
                    failed = missing = True
                elif not _create(path, shown, fixed.after, out):
                    failed = missing = True
                continue
            if missing:
                print("doctor: not written: %s: a file its fix needs was not written"
                      % shown, file=out)
                continue
            codes = sorted({d.code for d in diagnoses if d.path
                            and os.path.abspath(d.path) == path} or {"combined"})
            combined = Proposal(_CombinedFix("+".join(codes), rounds.passed), shown,
                                fixed.before, fixed.after)
            try:
                backup = apply(combined, force)
            except ApplyError as exc:
                print("doctor: %s" % exc, file=out)
                failed = True
                continue
            except OSError as exc:
                print("doctor: not written: %s: %s" % (shown, exc.strerror or exc), file=out)
                failed = True
                continue
            for diag in diagnoses:
                if diag.path and os.path.abspath(diag.path) == path:
                    diag.evidence.append("patch written to %s; the original is kept in %s"
                                         % (shown, backup))
            print("doctor: wrote %s (backup: %s)" % (shown, backup), file=out)
    return proposals, failed


class _CombinedFix:
    """What :func:`apply` reads of a diagnosis, for the combined fix of one file."""

    def __init__(self, code, verified):
        self.code, self.verified = code, verified


def relative_path(path):
    rel = os.path.relpath(path)
    return path if rel.startswith(os.pardir) else rel


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
