"""The target's main process: ``python -m doctor.agent.boot (SCRIPT | -m MODULE) ARGS``
(a notebook: :mod:`doctor.agent.notebook`).

Forces the start method, installs the hooks, then runs the target exactly as
``python SCRIPT`` / ``python -m MODULE`` would, as ``__main__``, with its own
``sys.argv`` and ``sys.path[0]``, so spawned workers re-import it as
``__mp_main__`` as on Windows and macOS.
"""
import os
import runpy
import sys

from doctor.agent import line_buffered
from doctor.agent.startup import become_main


def main(argv):
    line_buffered(sys.stdout)
    if argv[0].endswith(".ipynb"):  # its kernel is the main process (doctor.agent.kernel)
        from doctor.agent import notebook
        sys.exit(notebook.run(argv[0]))
    become_main()
    run_target(argv)


def run_target(argv):
    """Run ``[SCRIPT, *ARGS]`` or ``["-m", MODULE, *ARGS]`` as ``__main__``, with the
    ``sys.argv`` and ``sys.path[0]`` that ``python SCRIPT`` / ``python -m`` give it."""
    if argv[0] == "-m":
        module, args = argv[1], argv[2:]
        sys.path[0] = os.getcwd()
        sys.argv = [module, *args]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        script, args = argv[0], argv[1:]
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        sys.argv = [script, *args]
        runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
