"""DLW103: a function or class defined inside a function reaches a worker -> hoist it.

The definition moves to module level, just above the module-level statement that held
it, with its decorators and comments. Names it read from the function around it become
keyword-only parameters bound with ``functools.partial`` where it is used. A class
that reads such names, or a definition that uses ``nonlocal`` or reads another local
definition, gets no patch: moving it would change what it sees.
"""
import re

import libcst as cst

from doctor.patches import _cst, _hoist

CODE = "DLW103"
STATIC = True
_TEXT = re.compile(r"(function|class|method) '([\w.]+)' defined inside ([\w.]+)\(\)")


def fix(source, finding, facts):
    match = _TEXT.search(finding.text)
    if not match:
        return None
    kind, name = match.group(1), match.group(2)
    if kind == "method":
        name = name.split(".")[0]
    tree = _cst.Tree(source)
    module = tree.module
    candidates, named = [], []
    for definition in _hoist.definitions_named(tree, name):
        block = tree.parents.get(definition)
        owner = tree.parents.get(block)
        if isinstance(owner, cst.FunctionDef) and _hoist.contains(tree, owner, finding.line):
            candidates.append((definition, owner))
        elif isinstance(owner, cst.FunctionDef) and owner.name.value == match.group(3):
            named.append((definition, owner))  # a factory: reported where its value went
    candidates = candidates or named
    if len(candidates) != 1:
        return None
    definition, owner = candidates[0]
    module_bound, used = _cst.module_names(module)
    if name in module_bound or "nonlocal" in _cst.code(definition):
        return None
    scopes = [owner] + tree.functions_around(owner)
    local = set()
    local_defs = set()
    for func in scopes:
        local |= _cst.bound_in_function(func)
        local_defs |= {s.name.value for s in func.body.body
                       if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    captured = sorted((_cst.free_names(definition) & local) - {name})
    if captured and (isinstance(definition, cst.ClassDef) or set(captured) & local_defs):
        return None
    top = tree.top_statement(owner)
    if captured:
        partial, module = _cst.partial_name(module)
        definition_new = _with_keyword_params(definition, captured)
        bound = cst.parse_expression("%s(%s, %s)" % (
            partial, name, ", ".join("%s=%s" % (c, c) for c in captured)))

        def replace_refs(new_owner):
            return new_owner.visit(_Refs(name, bound))
        # the module may have gained an import above: find the same nodes in it
        tree2 = _cst.Tree(module.code)
        return _hoist_again(tree2, name, finding.line, definition_new, replace_refs)
    new = _hoist.hoist(module, owner, top, definition)
    return None if new is None else new.code


def _hoist_again(tree, name, line, definition_new, replace_refs):
    for definition in _hoist.definitions_named(tree, name):
        owner = tree.parents.get(tree.parents.get(definition))
        if isinstance(owner, cst.FunctionDef) and _hoist.contains(tree, owner, line + 1) \
                or isinstance(owner, cst.FunctionDef) and _hoist.contains(tree, owner, line):
            top = tree.top_statement(owner)
            module = tree.module
            new_owner = _hoist._remove(owner, definition)
            if new_owner is None:
                return None
            new_owner = replace_refs(new_owner)
            new_top = new_owner if top is owner else top.deep_replace(owner, new_owner)
            moved, new_top = _hoist.place_above(definition_new, new_top)
            body = []
            for stmt in module.body:
                body.extend([moved, new_top] if stmt is top else [stmt])
            return module.with_changes(body=body).code
    return None


def _with_keyword_params(definition, captured):
    params = definition.params
    extra = [cst.Param(cst.Name(c)) for c in captured]
    if isinstance(params.star_arg, (cst.Param, cst.ParamStar)):
        return definition.with_changes(params=params.with_changes(
            kwonly_params=list(params.kwonly_params) + extra))
    return definition.with_changes(params=params.with_changes(
        star_arg=cst.ParamStar(), kwonly_params=extra))


class _Refs(cst.CSTTransformer):
    """Every read of ``name`` becomes ``partial(name, ...)``."""

    def __init__(self, name, bound):
        super().__init__()
        self.name, self.bound = name, bound

    def visit_Attribute(self, node):
        return False  # only the object is visited, in leave_Attribute

    def leave_Attribute(self, original, updated):
        return updated.with_changes(value=updated.value.visit(self))

    def visit_Arg(self, node):
        return True

    def leave_Arg(self, original, updated):
        return updated

    def visit_AssignTarget(self, node):
        return False

    def leave_Name(self, original, updated):
        if original.value == self.name:
            return self.bound
        return updated
