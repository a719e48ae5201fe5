"""DLW105: pin_memory on a host with little RAM. It compares the call with the host
flake8 runs on (read once at start-up), so it is off unless selected by its own code."""
from flake8_dlworker.analysis.loaders import argument, is_known, literal, value_of
from flake8_dlworker.catalog import RULES
from flake8_dlworker.rules import Finding


def findings(scan):
    if scan.host.ram_gb is None or not scan.loaders:
        return ()
    return check_pin_memory(scan.loaders, scan.facts, scan.host.ram_gb, scan.host.min_ram_gb)


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
