"""Each rule's own VALID and INVALID examples from the catalog, run in-process."""
import ast

import pytest

from flake8_dlworker.catalog import RULES
from flake8_dlworker.plugin import HOST_RULES, Host, findings

#: the catalog codes the checker reports (the others are detected at run time)
IMPLEMENTED = frozenset(code for code, rule in RULES.items() if rule.static)
#: rules that only break when workers are spawned: silent under fork
SPAWN_ONLY = frozenset(code for code, rule in RULES.items() if rule.flag("spawn_only"))

#: a small host, so the host-dependent rules' examples mean the same on every machine
SMALL_HOST = Host(ram_gb=4.0, min_ram_gb=16.0, max_workers=2, cpus=2)


def _cases(kind, codes=IMPLEMENTED):
    for code in sorted(codes):
        for i, source in enumerate(getattr(RULES[code], kind)):
            yield pytest.param(code, source, id="%s-%s-%d" % (code, kind, i))


def _codes(source, filename="example.py", start_method="spawn", host=SMALL_HOST):
    return [f.code for f in findings(ast.parse(source), filename, start_method, host)]


@pytest.mark.parametrize("code, source", list(_cases("invalid")))
def test_invalid_example_reports(code, source):
    assert code in _codes(source)


@pytest.mark.parametrize("code, source", list(_cases("valid")))
def test_valid_example_is_silent(code, source):
    assert code not in _codes(source)


@pytest.mark.parametrize("code, source", list(_cases("invalid", SPAWN_ONLY)))
def test_fork_silences_spawn_rules(code, source):
    assert not set(_codes(source, start_method="fork")) & SPAWN_ONLY


# DLW108 keeps only its fork-safety half under fork: its own test below
@pytest.mark.parametrize("code, source", list(_cases(
    "invalid", IMPLEMENTED - SPAWN_ONLY - {"DLW108"})))
def test_fork_keeps_rules_that_do_not_depend_on_pickling(code, source):
    assert code in _codes(source, start_method="fork")


@pytest.mark.parametrize("code, source", list(_cases("invalid", HOST_RULES)))
def test_host_rules_are_off_without_a_host(code, source):
    assert code not in _codes(source, host=Host())


@pytest.mark.parametrize("code, source", list(_cases("invalid", HOST_RULES)))
def test_host_rules_are_silent_on_a_big_host(code, source):
    big = Host(ram_gb=512.0, min_ram_gb=16.0, max_workers=4096, cpus=4096)
    assert code not in _codes(source, host=big)


def test_every_implemented_rule_has_examples():
    for code in IMPLEMENTED:
        assert len(RULES[code].invalid) >= 4 and len(RULES[code].valid) >= 4, code


FORK_UNSAFE = ("h5py", "lmdb", "sqlite3")


@pytest.mark.parametrize("code, source", list(_cases("invalid", {"DLW108"})))
def test_fork_keeps_only_the_fork_safety_half_of_dlw108(code, source):
    """Under fork nothing is pickled: an open file or a lock is inherited and works, an
    HDF5, lmdb or sqlite handle shared by every worker does not."""
    unsafe = any("import %s" % name in source for name in FORK_UNSAFE)
    assert ("DLW108" in _codes(source, start_method="fork")) == unsafe
