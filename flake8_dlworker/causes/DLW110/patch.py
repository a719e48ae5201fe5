"""DLW110: more DataLoader workers than usable CPUs -> cap the count at the host's.

A literal ``num_workers=64`` becomes ``num_workers=min(64, os.cpu_count() or 1)``: the
script keeps its intent on a large machine and stops over-subscribing a small one.
``os.cpu_count()`` is used rather than the affinity mask (``os.sched_getaffinity``)
because the script may run on macOS or Windows, which lack it. A count that is not a
literal (an argument, a config value) is left alone: the fix is then in words. So is a
distributed run's (``facts["ranks"]`` above 1): its ranks share the node's CPUs, and how
many ranks a node runs is the launcher's to say, not the script's.
"""
import libcst as cst

from doctor.patches import _cst

CODE = "DLW110"
STATIC = False  # host-dependent: the checker reports it only where the CPUs are fewer


def fix(source, line, facts):
    if facts and facts.get("ranks", 0) > 1:
        return None
    return _cst.rewrite_loader_keyword(
        source, "num_workers", line, _literal_count,
        lambda value: "min(%s, os.cpu_count() or 1)" % value.value, "os")


def _literal_count(value):
    return isinstance(value, cst.Integer) and int(value.value, 0) > 1
