"""DLW105: ``pin_memory=True`` on a host with little RAM -> pin only where it helps.

``pin_memory=True`` becomes ``pin_memory=torch.cuda.is_available()``: pinned host
memory only speeds up copies to a CUDA device, so a host without one (where the rule's
small-RAM concern bites hardest, on laptops and CI) stops pinning. The RAM threshold
itself is not written into the script: reading the host's RAM portably needs a
package the script may not have (psutil), so on a CUDA host with little RAM the fix
stays in words (lower ``prefetch_factor`` or the batch size, or pass False).
"""
import libcst as cst

from doctor.patches import _cst

CODE = "DLW105"
STATIC = False  # host-dependent: the checker reports it only on a small host


def fix(source, line, facts):
    tree = _cst.Tree(source)
    module = tree.module
    targets = []
    for arg in tree.nodes(cst.Arg):
        if arg.keyword is None or arg.keyword.value != "pin_memory":
            continue
        if not (isinstance(arg.value, cst.Name) and arg.value.value == "True"):
            continue
        call = tree.parents.get(arg)
        if not isinstance(call, cst.Call) or \
                (_cst.dotted(call.func) or "").split(".")[-1] != "DataLoader":
            continue
        where = tree.pos[call]
        if line is None or where.start.line <= line <= where.end.line:
            targets.append(arg)
    if not targets:
        return None
    torch = "torch" if _cst.has_plain_import(module, "torch") else None
    for arg in targets:
        module = module.deep_replace(arg, arg.with_changes(
            value=cst.parse_expression("torch.cuda.is_available()")))
    if torch is None:
        module = _cst.add_import(module, "import torch")
    return module.code
