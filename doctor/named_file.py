"""A file named on the command line (a script to run, a log to explain): its status,
and the one-line errors the doctor gives for one it cannot read (exit status 2)."""
import os
import stat


def stat_named(path, error):
    """``os.stat(path)``; raises ``error(line)`` for a file that is missing or that
    cannot be looked at."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise error("%s: no such file" % path)
    except OSError as exc:
        raise error(unreadable(path, exc))


def unreadable(path, exc):
    """The line that says ``path`` could not be read, and why."""
    return "%s: cannot read: %s" % (path, exc.strerror or exc)


def special_kind(mode):
    """What a file that is not a regular one is: a FIFO, a device, a socket."""
    for test, kind in ((stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket")):
        if test(mode):
            return kind
    return "special file"
