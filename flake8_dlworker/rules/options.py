"""DLW105, DLW106, DLW110: what the arguments of one DataLoader call say on their own.

DLW106 is a plain contradiction torch rejects at construction.  DLW105 and DLW110
compare the call with the host flake8 runs on (read once at start-up), so they are
off unless selected by their own code.
"""
from flake8_dlworker.analysis.loaders import (
    argument, is_known, literal, literal_int, value_of, worker_count)
from flake8_dlworker.catalog import RULES
from flake8_dlworker.rules import Finding


def check_worker_options(loaders, facts):
    """DLW106: persistent_workers=True or a prefetch_factor while num_workers is 0."""
    for call, scope in loaders:
        if worker_count(call, scope, facts) != 0:
            continue
        for name in ("persistent_workers", "prefetch_factor"):
            node = argument(call, name)
            if node is None:
                continue
            value = literal(value_of(node), scope, facts)
            if not is_known(value):
                continue  # persistent_workers=workers > 0, prefetch_factor=2 if nw else None
            if name == "persistent_workers" and value is not True:
                continue
            if name == "prefetch_factor" and value is None:
                continue
            option = "%s=%r" % (name, value)
            yield Finding(node.lineno, node.col_offset, "DLW106",
                          RULES["DLW106"].message.format(option=option))


def check_pin_memory(loaders, facts, ram_gb, min_ram_gb):
    """DLW105: pin_memory that may be true on a host with less RAM than the threshold."""
    if ram_gb >= min_ram_gb:
        return
    text = RULES["DLW105"].message.format(ram_gb=ram_gb, min_ram_gb=min_ram_gb)
    for call, scope in loaders:
        node = argument(call, "pin_memory")
        if node is None:
            continue
        value = literal(value_of(node), scope, facts)
        if is_known(value) and not value:
            continue  # False, None, 0, or a name always bound to one: never pinned
        yield Finding(node.lineno, node.col_offset, "DLW105", text)


def check_worker_count(loaders, facts, max_workers, cpus):
    """DLW110: a literal num_workers above the host's limit."""
    for call, scope in loaders:
        node = argument(call, "num_workers")
        if node is None:
            continue
        workers = literal_int(value_of(node), scope, facts)
        if workers is not None and workers > max_workers:
            yield Finding(node.lineno, node.col_offset, "DLW110", RULES["DLW110"].message.format(
                num_workers=workers, max_workers=max_workers, cpus=cpus))
