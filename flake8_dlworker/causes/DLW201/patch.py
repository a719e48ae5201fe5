"""DLW201: a worker was killed for memory -> fewer workers, as many as memory allows.

From the run's measurements: each worker's peak RSS, and the memory available once
the run had ended. The new ``num_workers`` is ``floor(available / peak per worker)``,
written with its arithmetic in a comment above the loader. When that is not below the
current number, memory per worker does not explain the kill and there is no patch;
nor is there when the run measured nothing or the loader cannot be told apart.
"""
import math

import libcst as cst

from doctor.patches import _cst

CODE = "DLW201"
STATIC = False
FACTS = {"peak_rss_gb": 3.2, "available_gb": 7.5, "num_workers": 8}


def _loaders(tree):
    found = []
    for call in tree.nodes(cst.Call):
        name = _cst.dotted(call.func) or ""
        if name.split(".")[-1] == "DataLoader":
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "num_workers":
                    found.append((call, arg))
    return found


def _cap(value):
    """The literal bound on num_workers: ``2`` or ``min(args.workers, 2)``."""
    if isinstance(value, cst.Integer):
        return int(value.value)
    if isinstance(value, cst.Call) and _cst.dotted(value.func) == "min" and len(value.args) == 2 \
            and isinstance(value.args[1].value, cst.Integer):
        return int(value.args[1].value.value)
    return None


def fix(source, line, facts):
    peak, available = facts.get("peak_rss_gb"), facts.get("available_gb")
    if not peak or available is None:
        return None
    tree = _cst.Tree(source)
    loaders = _loaders(tree)
    current = facts.get("num_workers")
    if current:
        same = [(c, a) for c, a in loaders
                if isinstance(a.value, cst.Integer) and int(a.value.value) == current]
        loaders = same or [(c, a) for c, a in loaders if not isinstance(a.value, cst.Integer)]
    if len(loaders) != 1:
        return None
    call, arg = loaders[0]
    cap = _cap(arg.value)
    if cap is not None:
        current = cap
    if current is None:
        return None
    allowed = max(0, math.floor(available / peak))
    if allowed >= current:
        return None
    if isinstance(arg.value, cst.Integer):
        value = cst.Integer(str(allowed))
    elif cap is not None:  # min(expr, N): lower N
        inner = arg.value.args[1]
        value = arg.value.deep_replace(inner.value, cst.Integer(str(allowed)))
    else:
        value = cst.parse_expression("min(%s, %d)" % (_cst.code(arg.value).strip(), allowed))
    stmt = next(a for a in tree.ancestors(call) if isinstance(a, cst.BaseStatement))
    comment = cst.EmptyLine(comment=cst.Comment(
        "# DLW201: num_workers %d -> %d = floor(%.2f GiB available / %.2f GiB peak RSS per "
        "worker)" % (current, allowed, available, peak)))
    new_stmt = stmt.deep_replace(arg, arg.with_changes(value=value))
    new_stmt = new_stmt.with_changes(leading_lines=list(stmt.leading_lines) + [comment])
    return tree.module.deep_replace(stmt, new_stmt).code
