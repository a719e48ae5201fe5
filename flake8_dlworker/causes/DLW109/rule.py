"""DLW109: an IterableDataset that every worker iterates in full.

Each worker gets its own copy of an IterableDataset and runs ``__iter__`` from the
start.  Unless something in the ``__iter__`` chain asks ``get_worker_info()`` (or a
known sharding helper does it), every worker yields every sample.
"""
import ast

from flake8_dlworker.analysis import datasets
from flake8_dlworker.analysis.loaders import argument, value_of, worker_count
from flake8_dlworker.catalog import RULES
from flake8_dlworker.rules import Finding

CODE = "DLW109"
ITERABLE = frozenset(("torch.utils.data.IterableDataset",
                      "torch.utils.data.dataset.IterableDataset"))
#: names whose use shows the stream is split per worker
SHARDING = frozenset((
    "get_worker_info",        # torch.utils.data
    "split_dataset_by_node",  # datasets.distributed (per rank, and per worker inside)
    "split_by_worker",        # webdataset
    "sharding_filter",        # torchdata datapipes
    "ShardingFilter",
    "apply_sharding",
))


#: calls that return a stream which splits itself across workers (Hugging Face
#: streaming datasets shard by get_worker_info() inside their own __iter__)
SELF_SHARDING_SOURCES = frozenset(("load_dataset",))
_MAX_DEPTH = 4


def findings(scan):
    return check(scan.workers, scan.facts, scan.project)


def check(loaders, facts, project=None):
    seen = set()
    for call, scope in loaders:
        workers = worker_count(call, scope, facts)
        if workers is not None and workers < 2:
            continue  # one worker (or none) yields each sample once
        init_fn = argument(call, "worker_init_fn")
        if init_fn is not None and not (isinstance(value_of(init_fn), ast.Constant)
                                        and value_of(init_fn).value is None) \
                and not datasets.only_seeds(value_of(init_fn), scope, facts):
            continue  # worker_init_fn may configure each replica
        for dataset in datasets.dataset_classes(call, scope, facts, project):
            if _unsharded(dataset, facts):
                at = value_of(argument(call, "dataset"))
                finding = Finding(at.lineno, at.col_offset, CODE,
                                  RULES[CODE].message.format(name=dataset.node.name))
                if finding not in seen:
                    seen.add(finding)
                    yield finding


def _unsharded(dataset, facts):
    home = dataset.facts
    bases = datasets.external_bases(dataset.node, home)
    if not any(base in ITERABLE for base in bases):
        return False
    if any(base not in ITERABLE for base in bases):
        return False  # another library's base class may shard for it
    hit = datasets.find_method(dataset.node, "__iter__", home)
    if hit is None:
        return False
    chain = datasets.reachable(datasets.dataset_worker_methods(dataset))
    if datasets.mentions(chain, SHARDING):
        return False
    return not _given_a_sharded_source(dataset, facts)


def _given_a_sharded_source(dataset, facts):
    """The dataset wraps a stream it was given, and that stream shards itself: an
    instance of a module class whose own __iter__ shards, or a value built with a
    sharding helper (``split_dataset_by_node(...)``, ``load_dataset(..., streaming=True)``)."""
    if dataset.ctor is None:
        return False
    args = list(dataset.ctor.args) + [kw.value for kw in dataset.ctor.keywords]
    for arg in args:
        for value, scope in _values(arg, dataset.ctor_scope, facts, 0):
            for node in ast.walk(value):
                name = node.id if isinstance(node, ast.Name) else (
                    node.attr if isinstance(node, ast.Attribute) else None)
                if name in SHARDING or name in SELF_SHARDING_SOURCES:
                    return True
            for inner in datasets.dataset_classes_of(value, scope, facts):
                if inner.node is not dataset.node:
                    chain = datasets.reachable(datasets.dataset_worker_methods(inner))
                    if datasets.mentions(chain, SHARDING):
                        return True
    return False


def _values(expr, scope, facts, depth):
    """``expr`` and, for a name, every value bound to it (through other names too)."""
    yield expr, scope
    if isinstance(expr, ast.Name) and depth < _MAX_DEPTH:
        for binding in facts.lookup(expr.id, scope):
            if isinstance(binding.value, ast.expr):
                yield from _values(binding.value, binding.scope, facts, depth + 1)
