"""Run a script (or -m module) as __main__ under a forced spawn start method.

    python tests/spawn_run.py SCRIPT [ARGS...]
    python tests/spawn_run.py -m MODULE [ARGS...]

Spawned workers then re-import the script as __mp_main__, exactly as on Windows
and macOS, so a Linux box reproduces their crashes.
"""
import multiprocessing
import os
import runpy
import sys


def main():
    multiprocessing.set_start_method("spawn", force=True)
    args = sys.argv[1:]
    if args[:1] == ["-m"]:
        sys.argv = [args[1]] + args[2:]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        sys.path[0] = os.path.dirname(os.path.abspath(args[0]))
        runpy.run_path(args[0], run_name="__main__")


if __name__ == "__main__":
    main()
