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
    targets = _cst.loader_keywords(tree, 'pin_memory', line, _pinned)
    if not targets:
        return None
    torch = "torch" if _cst.has_plain_import(module, "torch") else None
    for arg in targets:
        module = module.deep_replace(arg, arg.with_changes(
            value=cst.parse_expression("torch.cuda.is_available()")))
    if torch is None:
        module = _cst.add_import(module, "import torch")
    return module.code


def _pinned(value):
    return isinstance(value, cst.Name) and value.value == "True"
