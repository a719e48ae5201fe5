"""Distributed launchers the doctor runs as the user would: ``torchrun ARGS`` and
``python -m torch.distributed.run ARGS`` (also the older ``torch.distributed.launch``).

The launcher itself runs unchanged, as the run's main process. Its ranks are new
interpreters that the doctor does not start, so the doctor reaches them through a
startup hook: a folder of the run, first on the run's ``PYTHONPATH``, holding a
``sitecustomize.py`` that Python imports at the start of every interpreter of the run
(the launcher, its ranks, their workers; also the ranks a script starts by running
itself again, as Lightning's ddp does). It acts only where the environment carries
the run's token (:data:`doctor.process_tree.TOKEN`) and a launcher made the process a
rank (``LOCAL_RANK`` set, no rank's label inherited, not a process that
multiprocessing started: :func:`doctor.agent.startup.start`); everywhere else it does
nothing. It then runs the ``sitecustomize`` it hides, the user's own or the
environment's, if there is one. The folder goes with the run's folder.
"""
import os
import shutil
import sys

#: the launcher modules, for ``-m MODULE``
MODULES = ("torch.distributed.run", "torch.distributed.launch")
#: the launcher commands, found on PATH as the shell finds them
COMMANDS = ("torchrun",)
#: the launcher's options that take no value (torch.distributed.run's argument parser);
#: every other option takes one, as the next argument or after ``=``
FLAGS = frozenset({"-h", "--help", "--standalone", "-m", "--module", "--no-python",
                   "--no_python", "--run-path", "--run_path", "--virtual-local-rank",
                   "--virtual_local_rank", "--use-env", "--use_env"})
#: the folder of the run that holds the startup hook
STARTUP = "startup"


class NotALauncherCommand(ValueError):
    """The launcher's arguments name no script to run."""


def is_launcher(target):
    """Whether ``target`` ([SCRIPT, *ARGS] or ["-m", MODULE, *ARGS]) runs a launcher."""
    if not target:
        return False
    if target[0] == "-m":
        return len(target) > 1 and target[1] in MODULES
    return os.path.basename(target[0]) in COMMANDS and not target[0].endswith(".py")


def launcher_args(target):
    """The arguments given to the launcher (its options, the script and its arguments)."""
    return list(target[2:] if target[0] == "-m" else target[1:])


def script_of(target):
    """(kind, name) of what the launcher runs in each rank: ("script", PATH), ("module",
    NAME) with its ``-m``, ("program", PATH) with ``--no-python``. Raises
    :class:`NotALauncherCommand` when the arguments end before it."""
    args = launcher_args(target)
    module = no_python = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if not arg.startswith("-") or arg == "-":
            break
        if arg in ("-h", "--help"):
            raise NotALauncherCommand("the launcher's --help runs no script")
        if arg in ("-m", "--module"):
            module = True
        elif arg in ("--no-python", "--no_python"):
            no_python = True
        i += 1 if (arg in FLAGS or "=" in arg) else 2
    if i >= len(args):
        raise NotALauncherCommand("give the launcher a script to run, as to %s"
                                  % " ".join(target[:2] if target[0] == "-m" else target[:1]))
    kind = "module" if module else "program" if no_python else "script"
    return kind, args[i]


def command(target):
    """The command line that runs the launcher as the user asked; None when the launcher
    command is not on PATH."""
    if target[0] == "-m":
        return [sys.executable, *target]
    found = shutil.which(target[0])
    if found is None:
        return None
    return [found, *target[1:]]


def describe(target):
    """The launcher as typed, its options, without the script and its arguments."""
    args = launcher_args(target)
    head = ["python", *target[:2]] if target[0] == "-m" else [os.path.basename(target[0])]
    try:
        _kind, script = script_of(target)
        args = args[:args.index(script)]
    except (NotALauncherCommand, ValueError):
        pass
    return " ".join(head + args)


#: the startup hook; TOKEN and ROOT are filled in for the run
SITECUSTOMIZE = '''\
"""Written by the doctor for one run (doctor.launchers): starts its agent in the ranks
of that run only, then runs the sitecustomize module this one hides, if any."""
import os
import sys

TOKEN = {token!r}
ROOT = {root!r}
VARIABLE = {variable!r}
LABEL = {label!r}
INHERITED = {inherited!r}  # the LOCAL_RANK the doctor itself was started with, if any


def _dlw_doctor_start():
    if os.environ.get(VARIABLE) != TOKEN:
        return
    if os.environ.get("LOCAL_RANK") in (None, INHERITED) or os.environ.get(LABEL):
        return  # the launcher itself, or a rank's worker: only ranks are hooked here
    argv = getattr(sys, "orig_argv", sys.argv)  # Python 3.10+: with -c's code
    if "--multiprocessing-fork" in argv or any(
            a.startswith("from multiprocessing.") for a in argv):
        return  # a process multiprocessing started (a worker, a resource tracker)
    import importlib.util

    if importlib.util.find_spec("doctor") is None and ROOT not in sys.path:
        sys.path.append(ROOT)  # last: the script's own modules come first
    try:
        from doctor.agent import startup
        startup.start()
    except Exception as exc:  # the doctor must never be why a rank fails
        sys.stderr.write("doctor: not watching this rank: %s: %s\\n" % (type(exc).__name__, exc))


def _dlw_doctor_chain():
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_dlw_doctor_start()
_dlw_doctor_chain()
'''


def startup_env(folder, token, env):
    """Write the startup hook into the run's ``folder``; ``env`` with it first on
    ``PYTHONPATH``."""
    from doctor.agent import RANK
    from doctor.process_tree import TOKEN

    hook = os.path.join(folder, STARTUP)
    os.mkdir(hook, 0o700)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(hook, "sitecustomize.py"), "w", encoding="utf-8") as handle:
        handle.write(SITECUSTOMIZE.format(token=token, root=root, variable=TOKEN,
                                          label=RANK, inherited=env.get("LOCAL_RANK")))
    env = dict(env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [hook, env.get("PYTHONPATH")]))
    return env
