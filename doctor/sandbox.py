"""The copy of the user's folder that a patched script is re-run in (``--verify``,
``--apply``, a notebook's fix): nothing the re-run does may change a file outside it.

What is copied, in order, while a budget lasts (COPY_FILES files, COPY_BYTES bytes):

- every Python file, and every folder that is a package or holds the file to patch
  (the patch is written into the copy, never through a link);
- every other file up to COPY_FILE_BYTES (configs, logs, small data: a script that
  writes ``config.json`` or appends to ``history.log`` beside itself writes the copy's);
- every other folder whose whole content fits what is left of the budget.

A larger file is cloned where the file system can (a copy-on-write reflink: a write
lands in the clone); where it cannot, and for a folder too large to copy, the copy
holds a symbolic link to the original, which the re-run reads through. A re-run that
writes into such a file or folder would reach the original: :func:`watch` records
their state and :func:`changed` names those that changed, so that such a re-run is
reported and never taken as proof. Folders of tools (``.git``, virtual environments,
caches) are left out.
"""
import os
import shutil

from flake8_dlworker import platforms

COPY_FILE_BYTES = 8 * 1024 ** 2
COPY_BYTES = 256 * 1024 ** 2
COPY_FILES = 5000
#: how many files of a linked folder :func:`changed` compares
WATCH_FILES = 20000
SKIP = {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", "node_modules",
        ".mypy_cache", ".pytest_cache", ".tox"}


class NotACopy(Exception):
    """The place of a file in the copy would lead out of it (through a linked folder)."""


class Copy:
    """One copy of a folder: where it is, and the originals it links to."""

    def __init__(self, src, dst, keep=()):
        self.src, self.dst = src, dst
        self.keep = set(keep)
        self.files_left, self.bytes_left = COPY_FILES, COPY_BYTES
        self.linked = []  # originals the copy reads through a link
        self._copy(src, dst)

    def _copy(self, src, dst):
        os.makedirs(dst, exist_ok=True)
        for entry in sorted(os.scandir(src), key=lambda e: e.name):
            if entry.name in SKIP:
                continue
            source, target = entry.path, os.path.join(dst, entry.name)
            if entry.is_dir():
                real = os.path.realpath(source)
                if real in self.keep or os.path.isfile(os.path.join(source, "__init__.py")) \
                        or self._fits(source):
                    self._copy(source, target)
                else:
                    self._link(real, target)
            elif entry.is_file():
                self._file(entry, source, target)
            else:  # a FIFO, a socket, a device, a dangling link: read where it is
                self._link(os.path.realpath(source), target)

    def _file(self, entry, source, target):
        size = entry.stat().st_size
        if entry.name.endswith(".py") or (size <= COPY_FILE_BYTES and self._take(1, size)):
            shutil.copy2(source, target)
        elif not platforms.clone_file(source, target):
            self._link(os.path.realpath(source), target)

    def _fits(self, folder):
        """Whether all of ``folder`` fits the budget left (then it is taken from it)."""
        files = size = 0
        for root, dirs, names in os.walk(folder):
            dirs[:] = [d for d in dirs if d not in SKIP]
            for name in names:
                try:
                    size += os.stat(os.path.join(root, name)).st_size
                except OSError:
                    continue
                files += 1
                if files > self.files_left or size > self.bytes_left:
                    return False
        return self._take(files, size)

    def _take(self, files, size):
        if files > self.files_left or size > self.bytes_left:
            return False
        self.files_left -= files
        self.bytes_left -= size
        return True

    def _link(self, real, target):
        os.symlink(real, target)
        self.linked.append(real)

    def place(self, path):
        """Where the user's ``path`` (a file of the folder) lies in the copy."""
        return os.path.join(self.dst, os.path.relpath(os.path.realpath(path),
                                                      os.path.realpath(self.src)))

    def put(self, path, text, new=False):
        """Write ``text`` as the copy's version of the user's ``path`` (a fixed file, or
        with ``new`` one the fix creates), never through a link to the original."""
        target = self.place(path)
        top = os.path.realpath(self.dst)
        if os.path.commonpath([top, os.path.realpath(os.path.dirname(target))]) != top:
            raise NotACopy(path)
        if os.path.lexists(target):
            if new:
                raise FileExistsError(target)
            os.unlink(target)
        with open(target, "x", encoding="utf-8", newline="") as handle:
            handle.write(text)
        return target

    def watch(self):
        """The state of every original the copy links to: what :func:`changed` compares."""
        return {path: _state(path) for path in self.linked}


def changed(before):
    """The originals whose state differs from ``before`` (:meth:`Copy.watch`)."""
    return sorted(path for path, state in before.items() if _state(path) != state)


def _state(path):
    """Size and modification time of a file, or of every file of a folder."""
    try:
        if not os.path.isdir(path):
            info = os.stat(path)
            return (info.st_size, info.st_mtime_ns)
        found = []
        for root, _dirs, names in os.walk(path):
            found.append((root, os.stat(root).st_mtime_ns))
            for name in names[:WATCH_FILES]:
                info = os.stat(os.path.join(root, name))
                found.append((name, info.st_size, info.st_mtime_ns))
            if len(found) > WATCH_FILES:  # a large data folder: its first files only
                break
        return tuple(found)
    except OSError:
        return None


def folders_above(path, top):
    """The folders between ``top`` and ``path``'s own: they are always really copied."""
    found = set()
    folder = os.path.dirname(path)
    while folder.startswith(top) and folder != top:
        found.add(folder)
        folder = os.path.dirname(folder)
    return found
