"""DLW110: more workers than the host's CPUs. It compares the call with the host flake8
runs on (read once at start-up), so it is off unless selected by its own code."""
from flake8_dlworker.analysis.loaders import argument, literal_int, value_of
from flake8_dlworker.catalog import RULES
from flake8_dlworker.rules import Finding


def findings(scan):
    if scan.host.max_workers is None or not scan.loaders:
        return ()
    return check_worker_count(scan.loaders, scan.facts, scan.host.max_workers, scan.host.cpus)


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
