"""Reading a source file that a log names, when the log is untrusted input.

A pasted log can name any path in a traceback frame: ``/etc/shadow``, a FIFO that
blocks the reader for ever, ``/dev/zero``, a symlink from the working tree to a
private file.  ``doctor explain`` reads a named file (for an excerpt, the static
checker, a patch, a definition's line) only through :func:`read_source`, which reads
only a regular file of bounded size, lying (after symlinks) inside one of the allowed
folders (the working directory, or the ``--source`` folders), that the current user
could read without privilege.  Otherwise the report goes on without the excerpt.
"""
import os
import stat

from flake8_dlworker import platforms

MAX_SOURCE_BYTES = 2 * 1024 * 1024
_OPEN_FLAGS = platforms.UNTRUSTED_READ_NO_LINK_FLAGS


def default_roots(sources=()):
    """The folders a log's paths may be read from: the working directory and ``sources``."""
    return [os.path.realpath(os.getcwd())] + [os.path.realpath(s) for s in sources]


def inside(path, roots):
    """The allowed folder that ``path`` resolves into (symlinks followed), or None."""
    real = os.path.realpath(path)
    for root in roots:
        try:
            if os.path.commonpath([root, real]) == root and real != root:
                return root
        except ValueError:  # another drive
            continue
    return None


def read_source(path, roots=None):
    """(the file's bytes, None), or (None, why it is not read, in a few words).

    ``roots`` None: no folder restriction (the run's own script); the other checks hold."""
    if not path:
        return None, "no path"
    if roots is not None and inside(path, roots) is None:
        return None, "it lies outside the working directory (see --source)"
    real = os.path.realpath(path)
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except OSError as exc:
        return None, exc.strerror or str(exc)
    try:
        info = os.fstat(fd)
        why = _refusal(info)
        if why:
            return None, why
        chunks = []
        left = MAX_SOURCE_BYTES + 1
        while left > 0:
            chunk = os.read(fd, min(left, 256 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:
            return None, "it is larger than %d bytes" % MAX_SOURCE_BYTES
        return b"".join(chunks), None
    except OSError as exc:
        return None, exc.strerror or str(exc)
    finally:
        os.close(fd)


def _refusal(info):
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    if info.st_size > MAX_SOURCE_BYTES:
        return "it is larger than %d bytes" % MAX_SOURCE_BYTES
    if not platforms.readable_by_owner_bits(info):
        return "only a privileged user may read it"
    return None
