"""DLW107: CUDA used in code that runs in the workers -> the workers return CPU tensors
and the training loop moves each batch to the GPU.

The flagged call loses its device: ``x.cuda()`` becomes ``x``, ``x.to("cuda")`` becomes
``x`` (``x.to("cuda", torch.float16)`` keeps ``x.to(torch.float16)``), and
``device="cuda"`` is dropped from a tensor factory, which then makes a CPU tensor. Each
loop over a loader of that dataset or ``collate_fn`` in the same file then starts with

    if torch.cuda.is_available():
        batch = batch.to("cuda", non_blocking=True)

so the batch still reaches the GPU, in the main process, where a host has one (and a
host without one runs on the CPU instead of failing in the worker). No patch where
that move cannot be written: a ``torch.cuda`` call that needs a context (the work
itself belongs elsewhere), a loop whose target is not one name (``for x, y in
loader``: which of them were on the GPU is the author's to say), or no loop over the
loader in the file.
"""
import re

import libcst as cst

from doctor.patches import _cst

CODE = "DLW107"
STATIC = True
_DEVICE_METHODS = ("to", "new_tensor", "new_zeros", "new_ones", "new_empty", "new_full")
_WORD = re.compile(r"[A-Za-z_]\w*")
_MOVE = '''\
if torch.cuda.is_available():
    {name} = {name}.to({device}, non_blocking=True)
'''


def fix(source, finding, facts):
    tree = _cst.Tree(source)
    site = _cuda_site(tree, finding)
    if site is None:
        return None
    call, stripped, device = site
    names = _site_names(tree, call)
    loops = [loop for loop, calls in _loader_loops(tree) if _mentions(calls, names)]
    if not loops or any(not isinstance(loop.target, cst.Name)
                        or not isinstance(loop.body, cst.IndentedBlock) for loop in loops):
        return None
    changes = {call: stripped}
    for loop in loops:
        name = loop.target.value
        move = cst.parse_statement(_MOVE.format(name=name, device=device))
        body = loop.body.body
        if body and _cst.code(body[0]).strip() == _cst.code(move).strip():
            continue  # an earlier round already moves this loop's batches
        changes[loop.body] = loop.body.with_changes(body=(move, *body))
    module = tree.module.visit(_Replace(changes))
    if not _cst.has_plain_import(module, "torch"):
        module = _cst.add_import(module, "import torch")
    return module.code


class _Replace(cst.CSTTransformer):
    """Every node of ``changes`` replaced in one pass (the tree's nodes are not reused
    by a rebuilt module, so one ``deep_replace`` after another would miss)."""

    def __init__(self, changes):
        super().__init__()
        self.changes = changes

    def on_leave(self, original_node, updated_node):
        return self.changes.get(original_node, updated_node)


def _cuda_site(tree, finding):
    """(the call, the call without its device, the device spelled for the loop)."""
    if "torch.cuda." in finding.text.split(";")[0]:
        return None  # a CUDA context call: the work itself must move, not a tensor
    for call in tree.at(finding.line, finding.col, cst.Call):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "cuda":
            return call, func.value, '"cuda"'
        device = _device_keyword(call)
        if device is not None:
            kept = [a for a in call.args if a is not device]
            return call, call.with_changes(args=_commas(kept)), _spelled(device.value)
        if isinstance(func, cst.Attribute) and func.attr.value == "to":
            positional = [a for a in call.args if a.keyword is None and not a.star]
            if not positional:
                continue
            device = positional[0]
            kept = [a for a in call.args if a is not device and not (
                a.keyword is not None and a.keyword.value == "non_blocking")]
            if not kept:
                return call, func.value, _spelled(device.value)
            return call, call.with_changes(args=_commas(kept)), _spelled(device.value)
    return None


def _device_keyword(call):
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "device":
            return arg
    return None


def _commas(args):
    if not args:
        return []
    return [*args[:-1], args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]


def _spelled(device):
    """A literal device as the script wrote it ("cuda:1", torch.device("cuda")), else
    "cuda": a name the worker used need not exist where the loop runs."""
    if isinstance(device, cst.SimpleString):
        return _cst.code(device)
    if isinstance(device, cst.Call) and _cst.dotted(device.func) == "torch.device" and \
            all(isinstance(a.value, (cst.SimpleString, cst.Integer)) for a in device.args):
        return _cst.code(device)
    return '"cuda"'


def _site_names(tree, call):
    """Names of the classes and functions around the call (the dataset, the collate)."""
    return {a.name.value for a in tree.ancestors(call)
            if isinstance(a, (cst.ClassDef, cst.FunctionDef))
            and not a.name.value.startswith("__")}


def _loader_loops(tree):
    """(for loop, the DataLoader call it iterates) for each loop over a loader."""
    calls = {}
    for assign in tree.nodes(cst.Assign):
        if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name) \
                and _is_loader_call(assign.value):
            calls.setdefault(assign.targets[0].target.value, []).append(assign.value)
    for loop in tree.nodes(cst.For):
        if _is_loader_call(loop.iter):
            yield loop, [loop.iter]
        elif isinstance(loop.iter, cst.Name) and loop.iter.value in calls:
            yield loop, calls[loop.iter.value]


def _mentions(calls, names):
    return any(names & set(_WORD.findall(_cst.code(call))) for call in calls)


def _is_loader_call(node):
    return isinstance(node, cst.Call) and \
        (_cst.dotted(node.func) or "").split(".")[-1] == "DataLoader"
