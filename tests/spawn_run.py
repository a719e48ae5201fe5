"""Run a script or module as ``__main__`` under a forced ``spawn`` start method.

Usage::

    python tests/spawn_run.py SCRIPT [ARGS...]
    python tests/spawn_run.py -m MODULE [ARGS...]
    python tests/spawn_run.py --fork SCRIPT [ARGS...]   (the reference run, see below)

Linux defaults to ``fork``, which hides every DLW1xx crash. This runner forces
``spawn`` and then runs the target exactly as ``python SCRIPT`` / ``python -m
MODULE`` would, so each spawned worker re-imports the script as ``__mp_main__``
(or, for ``-m pkg``, finds only the bare bootstrap ``__main__``), as on Windows
and macOS.

``--fork`` runs the target under ``fork`` instead, the start method Linux used before
Python 3.14, where nothing is pickled into the workers: what a crashing script prints
when nothing breaks, the reference its patched copy must print under spawn.
"""
import multiprocessing
import sys

from doctor.agent.boot import run_target

USAGE = ("usage: spawn_run.py [--fork] SCRIPT [ARGS...] | "
         "spawn_run.py [--fork] -m MODULE [ARGS...]")


def main(argv):
    method = "spawn"
    if argv[:1] == ["--fork"]:
        method, argv = "fork", argv[1:]
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        print(USAGE, file=sys.stderr)
        return 2
    multiprocessing.set_start_method(method, force=True)
    run_target(argv)  # the doctor's own runner, without its hooks
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
