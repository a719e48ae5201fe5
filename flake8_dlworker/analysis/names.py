"""Qualified names of the things the rules look for, and their import aliases."""
import ast
import os

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


def record_import(node, aliases, filename=None):
    """Add the names bound by an ``import`` / ``from ... import`` node to ``aliases``; a
    relative import of the module ``filename`` (``from .data import Shards``) binds the
    name its package gives it, marked by a leading dot (:func:`relative_module`)."""
    if isinstance(node, ast.ImportFrom) and node.level:
        base = relative_module(filename, node.level, node.module)
        if base is not None:
            for alias in node.names:
                if alias.name != "*":
                    aliases[alias.asname or alias.name] = base + "." + alias.name
        return
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


#: a module's folder -> (the folder that holds its top package, the package's names)
_PACKAGES = {}
#: folders of installed code: its relative imports are the library's own, never followed
_INSTALLED = frozenset(("site-packages", "dist-packages"))


def package_of(filename):
    """(folder that holds the top package, [its package names]) for the package the
    module ``filename`` lies in (its own folder and each folder above it, while they hold
    an ``__init__.py``); None outside a package (a script's relative import fails when
    it is run), for installed code, or a folder that is no package name."""
    folder = os.path.dirname(os.path.abspath(filename or "."))
    if folder not in _PACKAGES:
        parts, top = [], folder
        while os.path.isfile(os.path.join(top, "__init__.py")) and os.path.dirname(top) != top:
            parts.insert(0, os.path.basename(top))
            top = os.path.dirname(top)
        found = (top, parts)
        if not parts or _INSTALLED & set(folder.split(os.sep)) or not all(
                p.isidentifier() for p in parts):
            found = None
        _PACKAGES[folder] = found
    return _PACKAGES[folder]


def relative_module(filename, level, module):
    """The name ``from <level dots><module> import ...`` in the module ``filename``
    imports from: its package's dotted name, with a leading dot (``.pkg.data``) so that
    it never reads as a library's own name (inside torch's sources, ``from .dataloader
    import DataLoader`` stays torch's private business). None when it cannot be told."""
    package = package_of(filename) if filename else None
    if package is None or level > len(package[1]):
        return None
    parts = package[1][:len(package[1]) - (level - 1)]
    if module:
        parts = parts + [module]
    return "." + ".".join(parts)


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
