"""How a process becomes a main process of the doctor's run: the script's
(:mod:`doctor.agent.boot`), a notebook kernel's (:mod:`doctor.agent.kernel`), and each
rank's of a distributed run, labelled with its rank, as the events of its workers are.

A distributed run starts its ranks in two ways, and the doctor reaches them in two:

- a launcher (``torchrun``, ``python -m torch.distributed.run``) starts each rank as a
  new interpreter, and so does Lightning's ddp for its ranks after the first (it runs
  the script again): the doctor puts a folder of the run first on the run's
  ``PYTHONPATH``, whose ``sitecustomize.py`` (written for the run by
  :mod:`doctor.launchers`) calls :func:`start` in each interpreter that carries the
  run's token. Only a process that a launcher made a rank (``LOCAL_RANK`` set), that
  no rank of the run started (its workers inherit the rank's label) and that
  multiprocessing did not start becomes a rank here. Lightning's rank 0 is the script's
  main process, watched as any script is: it becomes rank 0 (:func:`late_rank`) when
  it has set the labels of a rank in its own environment, before it started the others;
- ``torch.multiprocessing.start_processes`` (``mp.spawn``, Lightning's ``ddp_spawn``)
  in a hooked process: the hooks hand each rank :func:`spawned_rank` wrapped around the
  user's function, which pickles by reference, so the rank imports this module and
  starts here before the function runs.
"""
import multiprocessing
import os
import socket
import sys
import time
import traceback

from doctor.agent import OWN, RANK, START_METHOD, emit, own_start_method, rank_labels, \
    set_rank_labels, stack_file
from doctor.agent import hooks, unseen
from flake8_dlworker import platforms


def become_main():
    """Make this process a main process of the run: the start method forced, stacks
    answered when asked, torch's DataLoader (and the ranks it spawns) hooked, and the
    doctor's own frames and warnings kept out of what the script prints."""
    method = os.environ.get(START_METHOD, "spawn")
    if method == OWN:  # --compare: the script's own start method, nothing forced
        method = own_start_method()
    else:
        multiprocessing.set_start_method(method, force=True)
    dump_to = stack_file()
    if dump_to is not None:
        platforms.answer_stack_requests(dump_to)
    hooks.install(rank_entry=spawned_rank, on_loader=late_rank)
    unseen.install()
    emit("main_start", start_method=method)


def start():
    """In an interpreter of a launcher's run: become a rank if this is one's main process."""
    if os.environ.get(RANK) or "LOCAL_RANK" not in os.environ:
        return  # a rank's own child (a worker, the resource tracker), or the launcher
    become_rank(_labels_from_environment())
    _watch_uncaught()


def late_rank():
    """Lightning's ddp: the script's own process sets ``LOCAL_RANK`` and ``NODE_RANK`` in
    its environment as it starts the other ranks, and trains as rank 0 of its node. Its
    loaders made from then on, their workers and its uncaught exception carry the label
    (event ``rank_start``); what it did before was the script's, unlabelled."""
    if (rank_labels() or "LOCAL_RANK" not in os.environ
            or multiprocessing.parent_process() is not None):
        return
    set_rank_labels(_labels_from_environment())
    emit("rank_start")
    _watch_uncaught()


def _labels_from_environment():
    rank, local_rank = _number("RANK"), _number("LOCAL_RANK")
    node = _number("GROUP_RANK")
    if rank is None:  # Lightning's ddp: LOCAL_RANK and NODE_RANK only
        node = _number("NODE_RANK")
        rank = local_rank if not node else None
    return {"rank": rank, "local_rank": local_rank, "node": node,
            "nodes": _number("GROUP_WORLD_SIZE"), "host": socket.gethostname()}


def _watch_uncaught():
    hook = sys.excepthook

    def excepthook(kind, value, tb):
        _uncaught(kind, value, tb)
        hook(kind, value, tb)

    sys.excepthook = excepthook


def spawned_rank(fn, index, *args):
    """A rank started by ``torch.multiprocessing.start_processes``: labelled with its
    index among the processes started, then the user's ``fn(index, *args)``."""
    become_rank({"rank": index, "local_rank": index, "node": None,
                 "host": socket.gethostname()})
    try:
        return fn(index, *args)
    except SystemExit:
        raise
    except BaseException as exc:  # torch's wrapper catches it before any excepthook
        _uncaught(type(exc), exc, exc.__traceback__)
        unseen.clean(exc, exc.__traceback__)  # the traceback torch prints: the user's
        raise


def become_rank(labels):
    hooks.forget_parent()  # a rank forked from a hooked process
    set_rank_labels(labels)
    become_main()


def _number(name):
    try:
        return int(os.environ[name])
    except (KeyError, ValueError):
        return None


def _uncaught(kind, value, tb):
    """Event ``uncaught``: the rank's exception that reached the top, and when: which
    rank failed first, and how."""
    try:
        emit("uncaught", t=time.time(), type=kind.__name__,
             message=str(value).split("\n", 1)[0][:500],
             traceback="".join(traceback.format_exception(kind, value, tb))[-4000:])
    except Exception:  # the agent must never be why the rank's error is not shown
        pass
