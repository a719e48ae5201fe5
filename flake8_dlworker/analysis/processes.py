"""Process starts that pickle callables, as DataLoader workers do.

``multiprocessing.Process(target=f, args=...)``, ``Pool.map(f, ...)`` and its
siblings, ``ProcessPoolExecutor.submit(f)`` / ``.map(f, ...)`` and
``torch.multiprocessing.spawn(f, args=...)`` (the launcher of distributed ranks) send
``f`` (and the process arguments) to a new interpreter by pickling under spawn and
forkserver, so the pickling causes apply to them as they do to a loader's
``collate_fn``. ``torch.multiprocessing.spawn`` always spawns;
``start_processes(..., start_method="fork")`` pickles nothing.
"""
import ast

from flake8_dlworker.analysis.loaders import literal
from flake8_dlworker.analysis.names import PROCESS_CLASSES

#: qualified names of pool and executor classes
POOLS = frozenset(("multiprocessing.Pool", "concurrent.futures.ProcessPoolExecutor"))
#: pool and executor methods whose first argument is pickled to the workers
POOL_METHODS = frozenset(("map", "imap", "imap_unordered", "starmap", "map_async",
                          "starmap_async", "apply", "apply_async", "submit"))
#: functions that pickle their function (``fn``, first) and its ``args`` (second) into
#: the processes they start
SPAWNERS = frozenset(("torch.multiprocessing.spawn", "torch.multiprocessing.start_processes"))
#: the parameters of a spawner that travel, by position
_SPAWNED = ("fn", "args")
_MAX_DEPTH = 4


def pickled_callables(call, scope, facts):
    """(expression, role) for what a process-starting call pickles; [] for other calls."""
    func = call.func
    qualname = facts.qualname(func, scope)
    if qualname in PROCESS_CLASSES or (
            isinstance(func, ast.Attribute) and func.attr == "Process"
            and _context_method(func.value, scope, facts) is not None):
        if _forks(func, scope, facts):
            return []
        found = []
        for kw in call.keywords:
            if kw.arg in ("target", "args", "kwargs"):
                found.append((kw.value, "the %s of a Process" % kw.arg))
        return found
    if qualname in SPAWNERS:
        if spawner_forks(call, qualname, scope, facts):
            return []
        return [(value, ("the function given to %s" if name == "fn" else "the args of %s")
                 % qualname) for name, value in _spawned(call)]
    if isinstance(func, ast.Attribute) and func.attr in POOL_METHODS and call.args:
        kind = _pool_kind(func.value, scope, facts, 0)
        if kind is not None:
            return [(call.args[0], "the function given to %s.%s" % (kind, func.attr))]
    return []


def spawner_forks(call, qualname, scope, facts):
    """``start_processes(..., start_method="fork")``: the children are forked, nothing is
    pickled and nothing re-runs the main module (``spawn`` itself always spawns)."""
    if qualname != "torch.multiprocessing.start_processes":
        return False
    given = next((kw.value for kw in call.keywords if kw.arg == "start_method"), None)
    if given is None and len(call.args) > 5 and not any(
            isinstance(arg, ast.Starred) for arg in call.args[:6]):
        given = call.args[5]
    return given is not None and literal(given, scope, facts) == "fork"


def _spawned(call):
    """(parameter, expression) of a spawner call's ``fn`` and ``args``."""
    for position, arg in enumerate(call.args[:len(_SPAWNED)]):
        if isinstance(arg, ast.Starred):
            break
        yield _SPAWNED[position], arg
    for kw in call.keywords:
        if kw.arg in _SPAWNED:
            yield kw.arg, kw.value


def _pool_kind(expr, scope, facts, depth):
    """"Pool" or "ProcessPoolExecutor" when ``expr`` is one started without fork."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, ast.Call):
        qualname = facts.qualname(expr.func, scope)
        if qualname in POOLS:
            if any(kw.arg == "mp_context" and _is_fork_context(kw.value, scope, facts)
                   for kw in expr.keywords):
                return None
            return qualname.rsplit(".", 1)[1]
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "Pool":
            if _context_method(expr.func.value, scope, facts) is not None \
                    and not _forks(expr.func, scope, facts):
                return "Pool"
        return None
    if isinstance(expr, ast.Name):
        return facts.first_bound(expr.id, scope,
                                 lambda value, at: _pool_kind(value, at, facts, depth + 1))
    return None


def _context_method(expr, scope, facts, depth=0):
    """The ``get_context(...)`` call ``expr`` is (or names), else None."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, ast.Call):
        if facts.qualname(expr.func, scope) == "multiprocessing.get_context":
            return expr
        return None
    if isinstance(expr, ast.Name):
        qualname = facts.qualname(expr, scope)
        if qualname in ("multiprocessing", "torch.multiprocessing"):
            return expr
        return facts.first_bound(
            expr.id, scope, lambda value, at: _context_method(value, at, facts, depth + 1))
    return None


def _forks(func, scope, facts):
    """``get_context("fork").Process``: nothing is pickled."""
    if not isinstance(func, ast.Attribute):
        return False
    return _is_fork_context(func.value, scope, facts)


def _is_fork_context(expr, scope, facts):
    context = _context_method(expr, scope, facts)
    return (isinstance(context, ast.Call) and context.args
            and isinstance(context.args[0], ast.Constant) and context.args[0].value == "fork")
