"""DLW211: a dataset attribute set in the epoch loop while the loader's workers persist.

A loader with ``persistent_workers=True`` starts its workers once, at its first epoch,
and each keeps the copy of the dataset it was sent then. An attribute of that dataset
assigned inside a loop that iterates the loader (``train_ds.epoch = e``,
``loader.dataset.epoch = e``, or a call of a dataset method that assigns
``self.epoch``) changes only the main process's object. Silent where the value lives
elsewhere: a sampler's ``set_epoch`` (the sampler stays in the main process), a
non-persistent loader (each epoch's workers get a fresh copy), a value shared through
``multiprocessing.Value`` (``ds.epoch.value = e`` assigns to the shared object, not to
the dataset), and an attribute the dataset's worker methods never read, where the
dataset's class is in reach.
"""
import ast

from flake8_dlworker.analysis import datasets
from flake8_dlworker.analysis.loaders import argument, is_known, literal, value_of
from flake8_dlworker.analysis.scope import NESTED, assigned_names, walk_scope
from flake8_dlworker.catalog import RULES
from flake8_dlworker.rules import Finding

CODE = "DLW211"
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def findings(scan):
    persistent = [(call, scope) for call, scope in scan.workers
                  if _persistent(call, scope, scan.facts)]
    if not persistent:
        return ()
    return check(persistent, scan.facts, scan.project)


def _persistent(call, scope, facts):
    node = argument(call, "persistent_workers")
    if node is None:
        return False
    value = literal(value_of(node), scope, facts)
    return is_known(value) and value is True


def check(loaders, facts, project=None):
    seen = set()
    for call, scope in loaders:
        for finding in _loader_findings(call, scope, facts, project):
            if finding[:2] not in seen:
                seen.add(finding[:2])
                yield finding


def _loader_findings(call, scope, facts, project):
    body = scope.node if scope.kind == "function" else facts.tree
    statements = list(walk_scope(body))
    names = assigned_names(call, statements)
    dataset = argument(call, "dataset")
    dataset_name = value_of(dataset).id if dataset is not None and isinstance(
        value_of(dataset), ast.Name) else None
    classes = datasets.dataset_classes(call, scope, facts, project) if dataset else []
    for loop in statements:
        if not isinstance(loop, _LOOPS) or not _iterates(loop, call, names):
            continue
        inside = list(_walk_body(loop))
        if any(node is call for node in inside):
            continue  # a new loader, and new workers, at each turn of this loop
        for node in inside:
            for target, attrs in _dataset_writes(node, dataset_name, names, classes, facts):
                shown = [a for a in attrs if _read_by_workers(a, classes)]
                if shown:
                    yield Finding(target.lineno, target.col_offset, CODE,
                                  RULES[CODE].message.format(
                                      attribute=shown[0], line=call.lineno))


def _walk_body(loop):
    for stmt in loop.body + loop.orelse:
        yield stmt
        if not isinstance(stmt, NESTED):
            yield from walk_scope(stmt)


def _iterates(loop, call, names):
    """The loop, or a loop inside it, iterates the loader (``for b in loader``,
    ``enumerate(loader)``, ``tqdm(loader)``, ``for b in DataLoader(...)``, a
    comprehension over it)."""
    for node in [loop] + list(_walk_body(loop)):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            for part in ast.walk(node.iter):
                if part is call or (isinstance(part, ast.Name) and part.id in names):
                    return True
    return False


def _is_dataset(expr, dataset_name, names):
    """``train_ds`` (the name the loader was given) or ``loader.dataset``."""
    if isinstance(expr, ast.Name):
        return expr.id == dataset_name
    return (isinstance(expr, ast.Attribute) and expr.attr == "dataset"
            and isinstance(expr.value, ast.Name) and expr.value.id in names)


def _dataset_writes(node, dataset_name, names, classes, facts):
    """(node, attributes) for a write to the dataset's own attributes: an assignment, or
    a call of a method of its class that assigns ``self.<attribute>``."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and _is_dataset(node.func.value, dataset_name, names):
        attrs = _method_assigns(node.func.attr, classes)
        return [(node, attrs)] if attrs else []
    else:
        return []
    found = []
    for target in targets:
        for part in ast.walk(target):
            if isinstance(part, ast.Attribute) and isinstance(part.ctx, ast.Store) \
                    and _is_dataset(part.value, dataset_name, names):
                found.append((part, [part.attr]))
    return found


def _method_assigns(name, classes):
    """The attributes the method ``name`` of the dataset's classes assigns on ``self``."""
    attrs = []
    for dataset in classes:
        hit = datasets.find_method(dataset.node, name, dataset.facts)
        method = dataset.facts.scopes.get(hit[0]) if hit is not None else None
        if method is not None:
            attrs.extend(attr for attr, _value in method.self_assigns if attr not in attrs)
    return attrs


def _read_by_workers(attr, classes):
    """False only where every dataset class is in reach and the code its workers run
    never names the attribute."""
    if not classes:
        return True
    for dataset in classes:
        chain = datasets.dataset_worker_methods(dataset)
        if not chain or datasets.mentions(datasets.reachable(chain), {attr}):
            return True
    return False
