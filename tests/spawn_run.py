"""Run a script or module as ``__main__`` under a forced ``spawn`` start method.

Usage::

    python tests/spawn_run.py SCRIPT [ARGS...]
    python tests/spawn_run.py -m MODULE [ARGS...]

Linux defaults to ``fork``, which hides every DLW1xx crash. This runner forces
``spawn`` and then runs the target exactly as ``python SCRIPT`` / ``python -m
MODULE`` would, so each spawned worker re-imports the script as ``__mp_main__``
(or, for ``-m pkg``, finds only the bare bootstrap ``__main__``), as on Windows
and macOS.
"""
import multiprocessing
import os
import runpy
import sys

USAGE = "usage: spawn_run.py SCRIPT [ARGS...] | spawn_run.py -m MODULE [ARGS...]"


def main(argv):
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        print(USAGE, file=sys.stderr)
        return 2
    multiprocessing.set_start_method("spawn", force=True)
    if argv[0] == "-m":
        module, args = argv[1], argv[2:]
        # `python -m` puts the working directory first on sys.path.
        sys.path[0] = os.getcwd()
        sys.argv = [module, *args]  # argv[0] becomes the module's file (alter_sys)
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        script, args = argv[0], argv[1:]
        # `python SCRIPT` puts the script's folder first on sys.path.
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        sys.argv = [script, *args]
        runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
