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


def check(loaders, facts):
    for call, scope in loaders:
        workers = worker_count(call, scope, facts)
        if workers is not None and workers < 2:
            continue  # one worker (or none) yields each sample once
        init_fn = argument(call, "worker_init_fn")
        if init_fn is not None and not (isinstance(value_of(init_fn), ast.Constant)
                                        and value_of(init_fn).value is None):
            continue  # worker_init_fn may configure each replica
        for dataset in datasets.dataset_classes(call, scope, facts):
            if _unsharded(dataset, facts):
                at = value_of(argument(call, "dataset"))
                yield Finding(at.lineno, at.col_offset, CODE,
                              RULES[CODE].message.format(name=dataset.node.name))


def _unsharded(dataset, facts):
    bases = datasets.external_bases(dataset.node, facts)
    if not any(base in ITERABLE for base in bases):
        return False
    if any(base not in ITERABLE for base in bases):
        return False  # another library's base class may shard for it
    hit = datasets.find_method(dataset.node, "__iter__", facts)
    if hit is None:
        return False
    chain = datasets.reachable(datasets.dataset_worker_methods(dataset, facts), facts)
    return not datasets.mentions(chain, SHARDING)
