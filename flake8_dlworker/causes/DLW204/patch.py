"""DLW204: file descriptors run out -> share tensors through files, not descriptors.

``torch.multiprocessing.set_sharing_strategy("file_system")`` goes right after the
module's imports (with ``import torch.multiprocessing`` when torch itself is not
imported), so it runs before any DataLoader starts its workers.
"""
import libcst as cst

from doctor.patches import _cst

CODE = "DLW204"
STATIC = False
_CALL = '%s.multiprocessing.set_sharing_strategy("file_system")  # DLW204: open files ran out\n'


def _torch_name(module):
    for stmt in module.body:
        if _cst.is_import(stmt):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        name = _cst.dotted(alias.name) or ""
                        if alias.asname is None and name.split(".")[0] == "torch":
                            return "torch"
                        if alias.asname is not None and name == "torch":
                            return alias.asname.name.value
    return None


def fix(source, line, facts):
    if "set_sharing_strategy" in source:
        return None
    module = cst.parse_module(source)
    body = list(module.body)
    last = None
    for i, stmt in enumerate(body):
        if _cst.is_import(stmt):
            last = i
        elif not _cst.is_docstring(stmt):
            break
    if last is None:
        return None
    torch = _torch_name(module)
    new = []
    if torch is None:
        torch = "torch"
        new.append(cst.parse_statement("import torch.multiprocessing\n"))
    new.append(cst.parse_statement(_CALL % torch))
    body[last + 1:last + 1] = new
    return module.with_changes(body=body).code
