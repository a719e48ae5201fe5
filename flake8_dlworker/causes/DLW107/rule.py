"""DLW107: CUDA touched in code that runs inside DataLoader workers.

Worker-side code is the dataset's ``__getitem__`` / ``__iter__`` and what they call
in the module, the transforms the dataset holds, ``collate_fn`` and
``worker_init_fn``.  Moving a batch to the GPU in the training loop is the right
place and is never looked at.
"""
import ast
import os

from flake8_dlworker.analysis import datasets
from flake8_dlworker.analysis.loaders import argument, value_of
from flake8_dlworker.catalog import RULES
from flake8_dlworker.rules import Finding

CODE = "DLW107"
#: torch.cuda calls that create or need a CUDA context (is_available and
#: device_count do not, and are the usual guards)
_CONTEXT_CALLS = frozenset((
    "set_device", "current_device", "synchronize", "Stream", "Event", "current_stream",
    "default_stream", "empty_cache", "mem_get_info", "memory_allocated",
    "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ByteTensor",
    "BoolTensor", "init"))
#: tensor methods that take a device
_DEVICE_METHODS = frozenset(("to", "new_tensor", "new_zeros", "new_ones", "new_empty",
                             "new_full"))
_MAX_DEPTH = 4


def findings(scan):
    return check(scan.workers, scan.facts, scan.project)


def check(loaders, facts, project=None):
    seen = set()
    for call, scope in loaders:
        for code, role in _worker_code(call, scope, facts, project):
            for node, what in _cuda_uses(code):
                where = "%s in %s" % (what, role or code.label)
                at = node
                if code.facts is not facts:  # a dataset class from a module beside this one
                    where += ", %s:%d" % (os.path.basename(code.facts.filename), node.lineno)
                    at = value_of(argument(call, "dataset"))
                key = (at.lineno, at.col_offset, where)
                if key in seen:
                    continue
                seen.add(key)
                yield Finding(at.lineno, at.col_offset, CODE,
                              RULES[CODE].message.format(where=where))


def _worker_code(call, scope, facts, project):
    """(WorkerCode, role or None) for everything a loader runs in its workers."""
    starts = []
    for dataset in datasets.dataset_classes(call, scope, facts, project):
        starts.extend((code, None) for code in datasets.dataset_worker_methods(dataset))
        starts.extend((code, None) for code in datasets.transforms(dataset, facts))
    for role, code in datasets.loader_callables(call, scope, facts):
        starts.append((code, "%s %s" % (role, code.label)))
    found = []
    for code, role in starts:
        for reached in datasets.reachable([code]):
            found.append((reached, role if reached is code else None))
    return found


def _cuda_uses(code):
    facts = code.facts
    scope = facts.scopes.get(code.node)
    for node in ast.walk(code.node):
        if not isinstance(node, ast.Call):
            continue
        what = _cuda_call(node, code, scope, facts)
        if what is not None:
            yield node, what


def _cuda_call(call, code, scope, facts):
    func = call.func
    qualname = facts.qualname(func, scope) if scope is not None else None
    if qualname is not None and qualname.startswith("torch.cuda."):
        if qualname.rsplit(".", 1)[1] in _CONTEXT_CALLS:
            return qualname + "()"
        return None
    if isinstance(func, ast.Attribute):
        if func.attr == "cuda" and qualname is None:
            return ".cuda()"
        if func.attr in _DEVICE_METHODS:
            for arg in call.args[:1]:
                if _is_cuda(arg, code, scope, facts):
                    return ".%s(%s)" % (func.attr, _short(arg))
    for kw in call.keywords:
        if kw.arg == "device" and _is_cuda(kw.value, code, scope, facts):
            if (qualname or "").startswith("torch.") or (
                    isinstance(func, ast.Attribute) and func.attr in _DEVICE_METHODS):
                return "device=%s" % _short(kw.value)
    return None


def _short(expr):
    if isinstance(expr, ast.Constant):
        return repr(expr.value)
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        return "%s.%s" % (expr.value.id, expr.attr)
    return "a CUDA device"


def _is_cuda(expr, code, scope, facts, depth=0):
    """True when ``expr`` is (or may be, one branch of a conditional) a CUDA device."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, str) and (
            expr.value == "cuda" or expr.value.startswith("cuda:"))
    if isinstance(expr, ast.IfExp):
        return (_is_cuda(expr.body, code, scope, facts, depth + 1)
                or _is_cuda(expr.orelse, code, scope, facts, depth + 1))
    if isinstance(expr, ast.Call):
        if scope is not None and facts.qualname(expr.func, scope) == "torch.device":
            return any(_is_cuda(arg, code, scope, facts, depth + 1) for arg in expr.args[:1])
        return False
    if isinstance(expr, ast.Name) and scope is not None:
        return any(isinstance(b.value, ast.expr)
                   and _is_cuda(b.value, code, b.scope, facts, depth + 1)
                   for b in facts.lookup(expr.id, scope))
    if (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)
            and expr.value.id == "self" and code is not None and code.cls is not None):
        for attr, value, init, _cls in datasets.init_assigns(code.cls, code.facts):
            if attr == expr.attr:
                init_scope = code.facts.scopes.get(init)
                if _is_cuda(value, code, init_scope, code.facts, depth + 1):
                    return True
                # self.device = device, with the device given to the constructor
                dataset = code.dataset
                if isinstance(value, ast.Name) and dataset is not None:
                    given = dataset.argument_for(init, value.id)
                    if given is not None:
                        return _is_cuda(given, None, dataset.ctor_scope, dataset.ctor_facts,
                                        depth + 1)
                return False
    return False
