"""Writing a patched file in place without losing anyone's work.

The new text goes to a temporary file beside the old one and replaces it with
``os.replace``, so an interruption leaves the old file whole. Around that:

- a symbolic link is followed: its target is patched (and backed up), the link stays;
- a file with several hard links is rewritten in place (not replaced), so every name of
  it sees the patch;
- the file keeps its owner, group and mode; where the owner cannot be kept, nothing is
  written;
- a read-only file is not written;
- the file is compared with the text the patch was made from right before the
  replace: an edit made meanwhile is never overwritten;
- a signal noted by :mod:`doctor.signals` (SIGINT, SIGTERM, SIGHUP) before the replace
  stops it: the temporary file and the backup are removed, the file stays as it was.
  (SIGKILL cannot be caught: it may leave the temporary file and the backup, beside
  a file that is whole.)

Every refusal is a :class:`NotWritten` whose text starts with "not written:".

This is the one module that writes a file the tool changes: ``--apply`` (a script's
combined fix, :func:`write_fix`; a notebook and its new module, :func:`write_notebook`)
and ``check --fix`` (:func:`write_checked`). Each of them writes only under the working
directory (:func:`under_cwd`) and nothing once a signal was received.
"""
import os
import stat
import sys
import tempfile

from doctor import signals
from flake8_dlworker import platforms
from flake8_dlworker.untrusted import inert_line

#: the test hook: between writing the new text and replacing the file, say so on stderr
#: and wait for a line on stdin (a test edits or kills in that moment)
PAUSE_ENV = "DLW_DOCTOR_APPLY_PAUSE"


class NotWritten(Exception):
    def __init__(self, path, reason):
        super().__init__("not written: %s: %s" % (path, reason))


class ApplyError(Exception):
    """A patch that :func:`apply` refuses; the text starts with "not written:"."""


def under_cwd(path, cwd=None):
    """True when ``path`` resolves to a file inside the working directory."""
    cwd = os.path.realpath(cwd or os.getcwd())
    real = os.path.realpath(path)
    try:
        return os.path.commonpath([cwd, real]) == cwd and real != cwd
    except ValueError:  # another drive
        return False


def relative_path(path):
    rel = os.path.relpath(path)
    return path if rel.startswith(os.pardir) else rel


def _stopped():
    """Why nothing may be written now (a signal was received), or None."""
    if signals.received() is None:
        return None
    return "the doctor received %s" % signals.name(signals.received())


def apply(proposal, force=False, cwd=None):
    """Write one proposal (``path``, ``before``, ``after``, ``diag``: its ``code`` and
    ``verified``) in place; returns the backup's path. Raises ApplyError."""
    path = proposal.path
    if not under_cwd(path, cwd):
        raise ApplyError("not written: %s lies outside the working directory" % path)
    if not (proposal.diag.verified or force):
        raise ApplyError("not written: %s: the %s patch was not verified (--force writes it)"
                         % (path, proposal.diag.code))
    try:
        return replace_checked(path, proposal.before, proposal.after)
    except NotWritten as exc:
        raise ApplyError(str(exc))


def new_file(path, shown, text, out):
    """Write a file a fix creates (inside the working directory only, never over one
    that is there); one line on ``out`` says what happened; True if written."""
    if not under_cwd(path):
        print("doctor: not written: %s lies outside the working directory" % shown, file=out)
        return False
    if _stopped():
        print("doctor: not written: %s: %s" % (shown, _stopped()), file=out)
        return False
    try:
        create(path, text)
    except NotWritten as exc:
        print("doctor: %s" % exc, file=out)
        return False
    except OSError as exc:
        print("doctor: not written: %s: %s" % (shown, exc.strerror or exc), file=out)
        return False
    print("doctor: wrote %s (a new file)" % shown, file=out)
    return True


class _Fix:
    """What :func:`apply` reads: one file's patch and whether it was proved."""

    def __init__(self, path, before, after, code, verified):
        self.path, self.before, self.after = path, before, after
        self.diag = self
        self.code, self.verified = code, verified


def write_fix(files, verified, diagnoses, force=False, out=None):
    """``--apply``: write a script's combined fix (``files``: path -> FileFix), the files
    it creates first, so that a file changed to import from one never points at a module
    that is not there; True when something was not written."""
    out = out or sys.stderr
    if _stopped():
        print("doctor: not written: %s before the fix was proved" % _stopped(), file=out)
        return True
    failed = missing = False
    for path, fixed in sorted(files.items(), key=lambda i: (not i[1].created, i[0])):
        if not fixed.changed:
            continue
        shown = relative_path(path)
        if _stopped():
            print("doctor: not written: %s: %s" % (shown, _stopped()), file=out)
            failed = True
            continue
        if fixed.created:
            if not (verified or force):
                print("doctor: not written: %s: the fix that creates it was not "
                      "verified (--force writes it)" % shown, file=out)
                failed = missing = True
            elif not new_file(path, shown, fixed.after, out):
                failed = missing = True
            continue
        if missing:
            print("doctor: not written: %s: a file its fix needs was not written"
                  % shown, file=out)
            continue
        codes = sorted({d.code for d in diagnoses if d.path
                        and os.path.abspath(d.path) == path} or {"combined"})
        try:
            backup = apply(_Fix(shown, fixed.before, fixed.after, "+".join(codes), verified),
                           force)
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
    return failed


def write_notebook(fixed, diag, force=False, out=None):
    """``--apply`` of a notebook's fix: the new module first (never over an existing
    file), then the notebook, with a backup; True when both were written."""
    out = out or sys.stderr
    if _stopped():
        print("doctor: not written: %s: %s" % (fixed.path, _stopped()), file=out)
        return False
    outside = [p for p in (fixed.path, fixed.module_path) if not under_cwd(p)]
    if outside:
        print("doctor: not written: %s lies outside the working directory" % outside[0],
              file=out)
        return False
    if not (diag.verified or force):
        print("doctor: not written: %s: the %s patch was not verified (--force writes it)"
              % (fixed.path, diag.code), file=out)
        return False
    try:
        create(fixed.module_path, fixed.module_text)
    except NotWritten as exc:
        print("doctor: %s" % exc, file=out)
        return False
    except OSError as exc:
        print("doctor: not written: %s: %s" % (fixed.module_path, exc.strerror or exc),
              file=out)
        return False
    try:
        backup = replace_checked(fixed.path, fixed.before, fixed.after)
    except (NotWritten, OSError) as exc:
        os.unlink(fixed.module_path)
        print("doctor: %s" % (exc if isinstance(exc, NotWritten) else
                              "not written: %s: %s" % (fixed.path, exc.strerror or exc)),
              file=out)
        return False
    diag.evidence.append("patch written to %s and %s; the original is kept in %s"
                         % (fixed.path, fixed.module_path, backup))
    print("doctor: wrote %s and %s (backup: %s)" % (fixed.path, fixed.module_path, backup),
          file=out)
    return True


def write_checked(path, fixed, shown, out):
    """``check --fix``: one file's composed fix (the files it creates first); the number
    of files written."""
    if not under_cwd(path):
        print("doctor: not written: %s lies outside the working directory" % shown(path),
              file=out)
        return 0
    made = [new_file(new_path, shown(new_path), text, out)
            for new_path, text in sorted(fixed.creates.items())]
    if not all(made):
        print("doctor: not written: %s: a file its fix needs was not written" % shown(path),
              file=out)
        return 0
    try:
        backup = replace_checked(path, fixed.before, fixed.after)
    except NotWritten as exc:
        print("doctor: %s" % inert_line(exc), file=out)
        return len(made)
    except OSError as exc:
        print("doctor: not written: %s: %s" % (shown(path), exc.strerror or exc), file=out)
        return len(made)
    print("doctor: fixed %s: %s (backup: %s)" % (shown(path), "; ".join(fixed.steps),
                                                 shown(backup)), file=out)
    return len(made) + 1


def backup_path(path):
    candidate, n = path + ".orig", 2
    while os.path.lexists(candidate):
        candidate = "%s.orig.%d" % (path, n)
        n += 1
    return candidate


def writable_target(path):
    """The file to write for ``path`` (a link's target) and its stat; NotWritten when
    it must not be written."""
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError as exc:
        raise NotWritten(path, exc.strerror or str(exc))
    if not stat.S_ISREG(info.st_mode):
        raise NotWritten(path, "not a regular file")
    if not info.st_mode & stat.S_IWUSR:
        raise NotWritten(path, "the file is read-only (mode %s)" % oct(info.st_mode & 0o7777))
    return real, info


def replace_checked(path, before, after):
    """Write ``after`` over ``path`` (or its link's target) if it still holds ``before``,
    with a backup of ``before``; returns the backup's path."""
    if _stopped():
        raise NotWritten(path, _stopped())
    real, info = writable_target(path)
    if _read(real) != before:
        raise NotWritten(path, "it changed since it was read")
    backup = backup_path(real if os.path.islink(path) else path)
    write_atomic(backup, before, like=info)
    try:
        if info.st_nlink > 1:  # every name of a hard-linked file sees the fix
            write_in_place(real, after, expect=before)
        else:
            write_atomic(real, after, like=info, expect=before, pause_hook=True)
    except BaseException:
        if _read(real) == before:  # not replaced: a backup would say that it was
            _unlink(backup)
        raise
    return backup


def write_in_place(path, text, expect):
    """Overwrite ``path`` through its own inode (a hard-linked file keeps its links) if
    it still holds ``expect``; the backup beside it was written first."""
    with open(path, "r+", encoding="utf-8", newline="") as handle:
        if handle.read() != expect:
            raise NotWritten(path, "it changed while the patch was being written")
        handle.seek(0)
        handle.write(text)
        handle.truncate()
        handle.flush()
        os.fsync(handle.fileno())


def create(path, text):
    """Write a new file ``path``; NotWritten when something is there already (a file
    made meanwhile is never overwritten)."""
    if _stopped():
        raise NotWritten(path, _stopped())
    try:
        with open(path, "x", encoding="utf-8", newline="") as handle:
            handle.write(text)
    except FileExistsError:
        raise NotWritten(path, "a file of that name exists")


def write_atomic(path, text, like=None, expect=None, pause_hook=False):
    """Replace ``path`` by ``text`` through a temporary file in the same folder, with the
    owner, group and mode of ``like`` (a stat result). With ``expect``, the replace
    happens only if ``path`` still holds that text."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                               dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            if like is not None:
                _keep_owner_and_mode(handle.fileno(), like, path)
            os.fsync(handle.fileno())
        if pause_hook and os.environ.get(PAUSE_ENV):
            print("doctor: written %s, replacing %s" % (tmp, path), file=sys.stderr, flush=True)
            sys.stdin.readline()
        if expect is not None and _read(path) != expect:
            raise NotWritten(path, "it changed while the patch was being written")
        if signals.received() is not None:
            raise NotWritten(path, "the doctor received %s" % signals.name(signals.received()))
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _keep_owner_and_mode(fd, like, path):
    try:
        platforms.copy_owner_and_mode(fd, like)
    except OSError:
        raise NotWritten(path, "its owner (uid %d) could not be kept" % like.st_uid)


def _read(path):
    try:
        with open(path, "r", encoding="utf-8", newline="") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None
