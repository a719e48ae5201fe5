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
"""
import os
import stat
import sys
import tempfile

from doctor import signals
from flake8_dlworker import platforms

#: the test hook: between writing the new text and replacing the file, say so on stderr
#: and wait for a line on stdin (a test edits or kills in that moment)
PAUSE_ENV = "DLW_DOCTOR_APPLY_PAUSE"


class NotWritten(Exception):
    def __init__(self, path, reason):
        super().__init__("not written: %s: %s" % (path, reason))


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
