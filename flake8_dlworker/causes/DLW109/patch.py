"""DLW109: an IterableDataset that every worker iterates in full -> each worker yields
every ``num_workers``-th sample, its own share.

The class's ``__iter__`` keeps its body under a new name, ``_all_samples``, and a new
``__iter__`` deals the stream out by position:

    def __iter__(self):
        worker = get_worker_info()
        for index, sample in enumerate(self._all_samples()):
            if worker is None or index % worker.num_workers == worker.id:
                yield sample

Every sample is yielded once over all workers, in any stream, whatever its source.
Each worker still reads the whole stream and skips the rest; where reading is the
cost (files, shards), splitting the source itself by ``worker.id`` is faster, and the
catalog says how. No patch for a dataset class defined in another file or one that
inherits its ``__iter__``.
"""
import re

import libcst as cst

from doctor.patches import _cst

CODE = "DLW109"
STATIC = True
_NAME = re.compile(r"IterableDataset '(\w+)'")
_MODULE = "torch.utils.data"
_ITER = '''\
def __iter__(self):
    worker = {get_worker_info}()
    for index, sample in enumerate(self.{all_samples}()):
        if worker is None or index % worker.num_workers == worker.id:
            yield sample
'''


def fix(source, finding, facts):
    match = _NAME.search(finding.text)
    if not match:
        return None
    module = cst.parse_module(source)
    classes = [stmt for stmt in module.body
               if isinstance(stmt, cst.ClassDef) and stmt.name.value == match.group(1)]
    if len(classes) != 1:
        return None
    cls = classes[0]
    methods = [s for s in cls.body.body
               if isinstance(s, cst.FunctionDef) and s.name.value == "__iter__"]
    if len(methods) != 1 or methods[0].decorators:
        return None
    old = methods[0]
    taken = {s.name.value for s in cls.body.body if isinstance(s, (cst.FunctionDef,
                                                                   cst.ClassDef))}
    taken |= _cst.names(cls)[0] | _cst.names(cls)[1]
    all_samples = _cst.unique("_all_samples", taken)
    module, spelled = _cst.from_import(module, _MODULE, "get_worker_info")
    new_iter = cst.parse_statement(_ITER.format(get_worker_info=spelled,
                                                all_samples=all_samples))
    new_iter = new_iter.with_changes(leading_lines=old.leading_lines)
    renamed = old.with_changes(name=cst.Name(all_samples),
                               leading_lines=[cst.EmptyLine(indent=False)])
    body = []
    for stmt in cls.body.body:
        body.extend((new_iter, renamed) if stmt is old else (stmt,))
    cls_now = [s for s in module.body if isinstance(s, cst.ClassDef)
               and s.name.value == cls.name.value][0]
    return module.deep_replace(cls_now, cls_now.with_changes(
        body=cls_now.body.with_changes(body=body))).code
