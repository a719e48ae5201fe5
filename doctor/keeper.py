"""Ends a run's process tree when the doctor dies, however it dies.

The target runs in a session of its own (Ctrl-C in the terminal reaches the doctor
only), so a signal to the doctor's process group (``timeout -k``, a CI runner's group
kill) or the out-of-memory killer ending the doctor never reaches the target. The
keeper is a small process of its own session that the doctor starts before the target,
holding the read end of a pipe whose only write end the doctor holds. When the doctor
exits, by a normal end or by SIGKILL, the kernel closes that end; the keeper reads
end-of-file, ends every process of the run (:mod:`doctor.process_tree`: the target's
descendants, its session, the run's environment token) and removes the run's folder.
It works the same on every platform (a pipe and psutil). After a normal run it finds
nothing left to end.

Usage (by the supervisor only)::

    python -m doctor.keeper TOKEN FOLDER

On its standard input come the target's pid and start time once it started, and
``done`` when the doctor ended the run itself: then the keeper only exits.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from flake8_dlworker import platforms

#: the doctor's temporary folders: a run's, a verifying re-run's, a round's
_FOLDER = re.compile(r"^dlw-(doctor|verify|rounds)-(\d+)-")


def folder_prefix(kind):
    """The prefix of a temporary folder of this doctor (``kind``: doctor, verify,
    rounds): it names the doctor's pid, so that a later run can tell a dead run's."""
    return "dlw-%s-%d-" % (kind, os.getpid())


def remove_dead_runs(parent=None):
    """Remove the temporary folders of doctors that are gone (killed before they could
    remove them); the names of those removed."""
    import psutil

    parent = parent or tempfile.gettempdir()
    removed = []
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    for name in names:
        match = _FOLDER.match(name)
        path = os.path.join(parent, name)
        if match is None or not os.path.isdir(path) or os.path.islink(path):
            continue
        try:
            changed = os.stat(path).st_mtime
            owner = psutil.Process(int(match.group(2)))
            if owner.create_time() <= changed and owner.status() != psutil.STATUS_ZOMBIE:
                continue  # its doctor may still be at work
        except psutil.Error:
            pass  # no such process: its doctor is gone
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(name)
    return removed


class Keeper:
    """The doctor's side: start the keeper, tell it the target's pid, close at the end."""

    def __init__(self, token, folder):
        read_end, self._write_end = os.pipe()  # neither end is inherited by the target
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "doctor.keeper", token, folder], stdin=read_end,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                **platforms.own_session_options())
        finally:
            os.close(read_end)

    def watch(self, pid, started):
        os.write(self._write_end, b"%d %r\n" % (pid, started))

    def close(self):
        """The doctor ended the run itself: the keeper exits without a look."""
        if self._write_end is None:
            return
        try:
            os.write(self._write_end, b"done\n")
        except OSError:  # the keeper is gone: there is nobody to tell
            pass
        os.close(self._write_end)
        self._write_end = None
        self.proc.wait()


def main(argv):
    token, folder = argv
    words = sys.stdin.buffer.read().split()  # returns at end-of-file: the doctor is gone
    if b"done" in words:
        return 0
    import psutil

    from doctor.process_tree import ProcessTree

    root = os.getpid()  # the target's pid unless it was reused: then by the token alone
    if len(words) >= 2:
        try:
            if psutil.Process(int(words[0])).create_time() == float(words[1]):
                root = int(words[0])
        except (psutil.Error, ValueError):
            pass
    ProcessTree(root, token).end()
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
