"""The two test tiers, decided by the helpers that start torch.

``make test`` runs the fast tier: every test that starts no process importing torch,
plus the few real end-to-end runs marked ``e2e`` (one per way a run can go). ``make
test-all`` (and ``.ci/run``) runs every test.

A helper or fixture that starts a process importing torch (a doctor run, a spawned
DataLoader, a patched script re-run under spawn) is decorated with :func:`starts_torch`;
what the package itself runs that starts torch is named in :data:`PRODUCT_STARTERS`.
At collection, a test that reaches such a helper (through its own code, the helpers it
calls, or its fixtures) is marked ``full``; ``make test`` deselects ``full`` tests
that are not ``e2e``. No test is placed in a tier by hand, so the tiers cannot drift:
and should a test reach a marked helper some way the collection did not see (a helper
handed over as a value), the helper fails it in the fast tier instead of running.
"""
import functools
import re
import os
import subprocess
import sys
import types

import pytest

#: the mark the collection puts on every test that starts torch
FULL = "full"
#: the mark that keeps a test that starts torch in the fast tier: a real end-to-end run
E2E = "e2e"
#: fixtures of the installed package that start torch (the pytest plugin's)
TORCH_FIXTURES = frozenset({"dataloader_doctor"})
#: what the package runs in-process that starts torch, when a test calls it directly
PRODUCT_STARTERS = frozenset({
    "doctor.supervisor.Run", "doctor.pipeline.examine", "doctor.pipeline.observe",
    "doctor.pipeline.fix_script", "doctor.pipeline.converge", "doctor.pipeline.rerun",
    "doctor.pipeline.trial", "doctor.pipeline.fix_notebook", "doctor.pipeline.verify_notebook",
    "flake8_dlworker.pytest_plugin.DataLoaderDoctor"})
#: the tests' folder: only its functions are followed (the package's are named above)
HERE = os.path.dirname(os.path.abspath(__file__))

#: whether the running test may start torch (set for each test by conftest.py)
allowed = True


def starts_torch(func):
    """Mark ``func`` as a helper that starts a process importing torch."""
    @functools.wraps(func)
    def guarded(*args, **kwargs):
        if not allowed:
            raise AssertionError(
                "%s starts torch, but this test was not marked %r at collection: call it "
                "from the test's own code (or a helper of the test's module)"
                % (func.__name__, FULL))
        return func(*args, **kwargs)

    guarded.starts_torch = True
    return guarded


def reaches_torch(func, seen=None):
    """Whether ``func``'s code names a :func:`starts_torch` helper or one of the
    package's :data:`PRODUCT_STARTERS`, directly or through the test helpers it calls
    (its nested functions and lambdas too)."""
    seen = set() if seen is None else seen
    func = getattr(func, "__func__", func)
    if getattr(func, "starts_torch", False):
        return True
    code = getattr(func, "__code__", None)
    if code is None or code in seen or not code.co_filename.startswith(HERE):
        return False
    seen.add(code)
    scope = getattr(func, "__globals__", {})
    names = set(_names(code))
    for name in names:
        value = scope.get(name)
        found = [value]
        if isinstance(value, types.ModuleType):  # pipeline.examine(...)
            found += [getattr(value, attr, None) for attr in names]
        for value in found:
            if "%s.%s" % (getattr(value, "__module__", None),
                          getattr(value, "__qualname__", None)) in PRODUCT_STARTERS:
                return True
            if isinstance(value, type):  # a helper class: what making one does
                value = value.__dict__.get("__init__")
            if isinstance(value, types.FunctionType) and reaches_torch(value, seen):
                return True
    return False


def _names(code):
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _names(const)


def classify(item):
    """``full`` when the test starts torch: by its code or one of its fixtures."""
    if TORCH_FIXTURES & set(item.fixturenames):
        return True
    if reaches_torch(getattr(item, "function", None)):
        return True
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    return any(reaches_torch(d.func) for fixturedefs in defs.values() for d in fixturedefs)


def mark_items(items):
    for item in items:
        if classify(item):
            item.add_marker(pytest.mark.full)


@starts_torch
def run_python(args, **kwargs):
    """``subprocess.run([python, *args])`` for a program that imports torch."""
    return subprocess.run([sys.executable, *args], **kwargs)


@starts_torch
def popen_python(args, **kwargs):
    """``subprocess.Popen([python, *args])`` for a program that imports torch."""
    return subprocess.Popen([sys.executable, *args], **kwargs)


#: names of the framework fixtures, whose spawned workers import a framework (20-40 s each
#: here): they start first, so that the cores are not left with one of them at the end
FRAMEWORKS = re.compile(r"lightning|hf_|_pyg|library|accelerate|transformers|datamodule")


def frameworks_first(items):
    """``items`` with the full-tier tests of framework fixtures moved to the front, the
    order of the others kept (a long test started last would run alone)."""
    heavy = [item for item in items
             if item.get_closest_marker(FULL) and FRAMEWORKS.search(item.nodeid)]
    chosen = set(map(id, heavy))
    items[:] = heavy + [item for item in items if id(item) not in chosen]
