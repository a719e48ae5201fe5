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
    return _cst.rewrite_loader_keyword(source, "pin_memory", line, _pinned,
                                       lambda value: "torch.cuda.is_available()", "torch")


def _pinned(value):
    return isinstance(value, cst.Name) and value.value == "True"
