"""SIGINT, SIGTERM and SIGHUP while the doctor runs a target.

``timeout``, a cancelled CI job, ``docker stop`` and a closed terminal end the doctor
with one of these. The handler only notes the signal: the supervisor sees it within
one sample, ends the whole tree, and the command line still prints the report of what
was learned and exits with 128 + the signal's number. A second signal changes nothing:
the tree is being ended already.
"""
import signal

NAMES = ("SIGINT", "SIGTERM", "SIGHUP")
_received = []


def install():
    for name in NAMES:
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, _note)


def _note(number, _frame):
    note(number)


def note(number):
    _received.append(int(number))


def received():
    """The first signal received, or None."""
    return _received[0] if _received else None


def name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return "signal %d" % number


def exit_status():
    return 128 + received()
