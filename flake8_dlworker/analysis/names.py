"""Qualified names of the things the rules look for, and their import aliases."""
import ast

DATALOADER = "torch.utils.data.DataLoader"
#: classes that are a torch DataLoader, with its arguments: subclasses in libraries
LOADERS = frozenset((
    DATALOADER,
    "webdataset.WebLoader",
    "webdataset.compat.WebLoader",
    "torch_geometric.loader.DataLoader",
    "torch_geometric.data.DataLoader",
    "torch_geometric.loader.NeighborLoader",
))

#: spellings that name the same object as the canonical key.
_CANONICAL = {
    "torch.utils.data.dataloader.DataLoader": DATALOADER,
    "multiprocessing.pool.Pool": "multiprocessing.Pool",
    "multiprocessing.context.Process": "multiprocessing.Process",
    "multiprocessing.process.BaseProcess": "multiprocessing.Process",
    "torch.multiprocessing.Pool": "multiprocessing.Pool",
    "torch.multiprocessing.Process": "multiprocessing.Process",
    "torch.multiprocessing.get_context": "multiprocessing.get_context",
    "concurrent.futures.process.ProcessPoolExecutor": "concurrent.futures.ProcessPoolExecutor",
    "torch.multiprocessing.spawn.spawn": "torch.multiprocessing.spawn",
    "torch.multiprocessing.spawn.start_processes": "torch.multiprocessing.start_processes",
}

PROCESS_CLASSES = frozenset((
    "multiprocessing.Process",
    "multiprocessing.context.SpawnProcess",
    "multiprocessing.context.ForkServerProcess",
))

#: calls that start worker processes by themselves, with the words for the chain.
STARTERS = {
    "multiprocessing.Pool": "Pool created",
    "concurrent.futures.ProcessPoolExecutor": "ProcessPoolExecutor created",
    "torch.multiprocessing.spawn": "torch.multiprocessing.spawn called",
    "torch.multiprocessing.start_processes": "torch.multiprocessing.start_processes called",
}

PARTIAL = frozenset(("functools.partial",))


def canonical(qualname):
    return _CANONICAL.get(qualname, qualname)


def record_import(node, aliases):
    """Add the names bound by an ``import`` / ``from ... import`` node to ``aliases``."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                aliases[alias.asname] = alias.name
            else:
                top = alias.name.partition(".")[0]
                aliases[top] = top
    elif node.module is not None and not node.level:
        for alias in node.names:
            if alias.name != "*":
                aliases[alias.asname or alias.name] = node.module + "." + alias.name


def dotted(expr):
    """``a.b.c`` as a list of names, or None when the expression is not a dotted name."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    parts.reverse()
    return parts
