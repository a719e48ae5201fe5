"""DLW111: a random generator kept on the dataset is copied into every worker in the same
state -> reseed it per worker in a module-level ``worker_init_fn``.

The new function, placed right after the dataset class, rebuilds the generator with the
same factory from ``get_worker_info().seed`` (``% 2**32`` for ``RandomState``), and each
DataLoader built on that dataset gets ``worker_init_fn=`` it. A loader that already has
a ``worker_init_fn``, or no loader that can be tied to the class, gets no patch.
"""
import re

import libcst as cst

from doctor.patches import _cst

CODE = "DLW111"
STATIC = True
_TEXT = re.compile(r"dataset attribute 'self\.(\w+)'")


def fix(source, finding, facts):
    match = _TEXT.search(finding.text)
    tree = _cst.Tree(source)
    call = tree.first_at(finding.line, finding.col, cst.Call)
    if not match or call is None:
        return None
    attr = match.group(1)
    cls = next((a for a in tree.ancestors(call) if isinstance(a, cst.ClassDef)), None)
    if cls is None or cls not in tree.module.body:
        return None
    factory = _cst.code(call.func).strip()
    seed = "info.seed % 2**32" if factory.endswith("RandomState") else "info.seed"
    module = tree.module
    loaders = _loaders(tree, cls.name.value)
    if not loaders:
        return None
    _, info = _cst.from_import(module, "torch.utils.data", "get_worker_info")
    if any(_keyword(c, "worker_init_fn") for c in loaders):
        return _reseed_in_own_init(tree, loaders, info, attr, factory, seed)
    bound, used = _cst.module_names(module)
    name = _cst.unique("_seed_worker", bound | used)
    function = cst.parse_statement(
        "def %s(worker_id):\n    info = %s()\n    info.dataset.%s = %s(%s)\n" % (
            name, info, attr, factory, seed))
    function = function.with_changes(leading_lines=[_cst.EMPTY] * 2)
    for loader in loaders:
        module = module.deep_replace(loader, _with_keyword(loader, "worker_init_fn", name))
    body = list(module.body)
    index = [i for i, s in enumerate(tree.module.body) if s is cls][0]
    body.insert(index + 1, function)
    module = module.with_changes(body=body)
    return _cst.from_import(module, "torch.utils.data", "get_worker_info")[0].code


def _reseed_in_own_init(tree, loaders, info, attr, factory, seed):
    """The loaders already share a ``worker_init_fn`` defined at module level here (one
    that seeds numpy's global state, say): it rebuilds the generator too, at its end."""
    names = {_cst.code(_keyword(c, "worker_init_fn").value).strip() if _keyword(
        c, "worker_init_fn") else None for c in loaders}
    if len(names) != 1 or None in names:
        return None
    name = names.pop()
    function = next((s for s in tree.module.body if isinstance(s, cst.FunctionDef)
                     and s.name.value == name), None)
    if function is None or not isinstance(function.body, cst.IndentedBlock):
        return None
    read, bound = _cst.names(function)
    local = _cst.unique("info", _cst.bound_in_function(function) | read | set(bound))
    added = [cst.parse_statement("%s = %s()\n" % (local, info)),
             cst.parse_statement("%s.dataset.%s = %s(%s)\n" % (
                 local, attr, factory, seed.replace("info.", local + ".")))]
    body = list(function.body.body) + added
    module = tree.module.deep_replace(
        function, function.with_changes(body=function.body.with_changes(body=body)))
    return _cst.from_import(module, "torch.utils.data", "get_worker_info")[0].code


def _keyword(call, name):
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name),
                None)


def _loaders(tree, cls_name):
    """DataLoader calls whose dataset is ``Cls(...)`` or a name assigned ``Cls(...)``."""
    made_here = set()
    for assign in tree.nodes(cst.Assign):
        if isinstance(assign.value, cst.Call) and _cst.dotted(assign.value.func) == cls_name:
            for target in assign.targets:
                if isinstance(target.target, cst.Name):
                    made_here.add(target.target.value)
    found = []
    for call in tree.nodes(cst.Call):
        if (_cst.dotted(call.func) or "").split(".")[-1] != "DataLoader" or not call.args:
            continue
        dataset = _keyword(call, "dataset") or (call.args[0] if call.args[0].keyword is None
                                                else None)
        if dataset is None:
            continue
        value = dataset.value
        if isinstance(value, cst.Call) and _cst.dotted(value.func) == cls_name \
                or isinstance(value, cst.Name) and value.value in made_here:
            found.append(call)
    return found


def _with_keyword(call, name, value):
    args = list(call.args)
    last = args[-1]
    new = cst.Arg(keyword=cst.Name(name), value=cst.Name(value),
                  equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                        whitespace_after=cst.SimpleWhitespace("")))
    if isinstance(last.comma, cst.Comma):  # a trailing comma: keep the layout
        args.append(new.with_changes(comma=last.comma))
    else:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(new)
    return call.with_changes(args=args)
