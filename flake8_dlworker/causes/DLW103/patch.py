"""DLW103: a function or class defined inside a function reaches a worker -> hoist it.

The definition moves to module level, just above the module-level statement that held
it, with its decorators and comments. Names it read from the function around it become
keyword-only parameters bound with ``functools.partial`` where it is used. A class
that reads such names in its methods gets them as keyword-only arguments of its
``__init__``, kept on ``self`` (``Shifted()`` becomes ``Shifted(offset=offset)``), when
every use of the class in the function is a call and it adds no ``__init__`` over a
base that takes arguments. A definition that uses ``nonlocal`` or reads another local
definition gets no patch: moving it would change what it sees.
"""
import re

import libcst as cst

from doctor.patches import _cst, _hoist
from flake8_dlworker.causes.DLW103 import wraps as _wraps

CODE = "DLW103"
STATIC = True
_TEXT = re.compile(r"(function|class|method) '([\w.]+)' defined inside ([\w.]+)\(\)")


def fix(source, finding, facts):
    wrapped = _wraps.fix(source, finding)  # a decorator's wrapper: functools.wraps
    if wrapped is not None:
        return wrapped
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
    if captured and set(captured) & local_defs:
        return None
    top = tree.top_statement(owner)
    if captured and isinstance(definition, cst.ClassDef):
        return _hoist_class_with_values(tree, definition, owner, captured,
                                        _given_names(tree, owner, captured))
    if captured:
        partial, module = _cst.partial_name(module)
        definition_new = _with_keyword_params(definition, captured)
        bound = cst.parse_expression("%s(%s, %s)" % (
            partial, name, ", ".join("%s=%s" % (c, c) for c in captured)))

        def replace_refs(new_owner):
            return new_owner.visit(_Reads({name: bound}))
        # the module may have gained an import above: find the same nodes in it
        tree2 = _cst.Tree(module.code)
        return _hoist_again(tree2, name, finding.line, definition_new, replace_refs,
                            owner.name.value)
    new = _hoist.hoist(module, owner, top, definition)
    return None if new is None else new.code


def _hoist_again(tree, name, line, definition_new, replace_refs, owner_name):
    """The hoist in the module that may have gained an import: the definition inside the
    function that holds the finding's line, else inside the factory named
    ``owner_name`` (the finding lies where its value went)."""
    found = []
    for definition in _hoist.definitions_named(tree, name):
        owner = tree.parents.get(tree.parents.get(definition))
        if not isinstance(owner, cst.FunctionDef):
            continue
        if _hoist.contains(tree, owner, line + 1) or _hoist.contains(tree, owner, line):
            found.insert(0, (definition, owner))
        elif owner.name.value == owner_name:
            found.append((definition, owner))
    if not found:
        return None
    definition, owner = found[0]
    new = _hoist.hoist(tree.module, owner, tree.top_statement(owner), definition,
                       replace_refs, definition_new)
    return None if new is None else new.code


def _with_keyword_params(definition, captured):
    params = definition.params
    extra = [cst.Param(cst.Name(c)) for c in captured]
    if isinstance(params.star_arg, (cst.Param, cst.ParamStar)):
        return definition.with_changes(params=params.with_changes(
            kwonly_params=list(params.kwonly_params) + extra))
    return definition.with_changes(params=params.with_changes(
        star_arg=cst.ParamStar(), kwonly_params=extra))


class _Reads(cst.CSTTransformer):
    """Each read of a name in ``replacements`` becomes its node there: ``encode`` the
    ``partial(encode, ...)``, ``offset`` the ``self.offset``."""

    def __init__(self, replacements):
        super().__init__()
        self.replacements = replacements

    def visit_Attribute(self, node):
        return False  # only the object is visited, in leave_Attribute

    def leave_Attribute(self, original, updated):
        return updated.with_changes(value=updated.value.visit(self))

    def visit_Arg(self, node):
        return False  # the value only, in leave_Arg (not the keyword's name)

    def leave_Arg(self, original, updated):
        return updated.with_changes(value=updated.value.visit(self))

    def visit_AssignTarget(self, node):
        return False

    def leave_Name(self, original, updated):
        return self.replacements.get(original.value, updated)


#: bases whose ``__init__`` takes no argument: a class without its own may get one
_PLAIN_BASES = {"Dataset", "IterableDataset", "object", "torch.utils.data.Dataset",
                "torch.utils.data.IterableDataset", "data.Dataset", "data.IterableDataset"}


def _given_names(tree, owner, captured):
    """captured name -> the keyword and attribute it travels as: itself, except the
    ``self`` of the method that holds the class, named for that method's class
    (``model`` for ``Model``), since the hoisted class has a ``self`` of its own."""
    names = {c: c for c in captured}
    holder = tree.parents.get(tree.parents.get(owner))
    if "self" in names and isinstance(holder, cst.ClassDef):
        names["self"] = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", holder.name.value).lower()
    return names


def _hoist_class_with_values(tree, classdef, owner, captured, names):
    """The class at module level, the ``captured`` values of its function given to its
    ``__init__`` at each call in that function (as the keywords ``names`` gives) and
    read from ``self``; or None."""
    if len(set(names.values())) != len(names) or "self" in names.values():
        return None
    new_class = _values_on_self(classdef, captured, names)
    if new_class is None:
        return None
    calls = _Constructions(classdef.name.value, captured, names)
    new = _hoist.hoist(tree.module, owner, tree.top_statement(owner), classdef,
                       lambda new_owner: new_owner.visit(calls), new_class)
    if new is None or calls.other_use or not calls.count:
        return None
    return new.code


def _values_on_self(classdef, captured, names):
    """``classdef`` whose methods read ``self.<name>`` for each captured name, set by a
    (new or extended) ``__init__``; None where that would change what the code does."""
    wanted = set(captured)
    kept = [names[c] for c in captured]
    body = list(classdef.body.body)
    init_at = None
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.FunctionDef):
            if stmt.name.value == "__init__":
                init_at = i
                continue
            reads = _cst.free_names(stmt) & wanted
            if not reads:
                continue
            params = stmt.params.params
            if stmt.decorators or not params or _cst.bound_in_function(stmt) & wanted:
                return None
            on_self = {c: cst.Attribute(value=cst.Name(params[0].name.value),
                                        attr=cst.Name(names[c])) for c in wanted}
            body[i] = stmt.with_changes(body=stmt.body.visit(_Reads(on_self)))
        elif _cst.free_names(stmt) & wanted:
            return None  # read by the class body itself, when the class is created
    if any(a in kept for a in _attributes(classdef)):
        return None  # the instance has an attribute of that name already
    assigns = [cst.parse_statement("self.%s = %s\n" % (k, k)) for k in kept]
    if init_at is None:
        if any(_cst.dotted(b.value) not in _PLAIN_BASES for b in classdef.bases):
            return None
        init = cst.parse_statement("def __init__(self, *, %s):\n    pass\n"
                                   % ", ".join(kept))
        init = init.with_changes(body=init.body.with_changes(body=assigns))
        at = 1 if body and _cst.is_docstring(body[0]) else 0
        if at < len(body):
            body[at] = body[at].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        body.insert(at, init)
    else:
        init = body[init_at]
        if _cst.bound_in_function(init) & set(kept) or init.decorators:
            return None
        init = _with_keyword_params(init, kept)
        inner = list(init.body.body)
        at = 1 if inner and _cst.is_docstring(inner[0]) else 0
        inner[at:at] = assigns
        body[init_at] = init.with_changes(body=init.body.with_changes(body=inner))
    return classdef.with_changes(body=classdef.body.with_changes(body=body))


def _attributes(node):
    found = set()

    class Visitor(cst.CSTVisitor):
        def visit_Attribute(self, attr):
            found.add(attr.attr.value)
    node.visit(Visitor())
    return found


class _Constructions(cst.CSTTransformer):
    """Every ``Name(...)`` call gets the captured values as keywords; ``other_use`` when
    the class is used in any other way (passed on, subclassed, checked against)."""

    def __init__(self, name, captured, names):
        super().__init__()
        self.name, self.captured, self.names = name, captured, names
        self.count, self.other_use = 0, False

    def visit_Call(self, node):
        # the class's own name there is the construction, not another use
        return not (isinstance(node.func, cst.Name) and node.func.value == self.name)

    def leave_Call(self, original, updated):
        if isinstance(original.func, cst.Name) and original.func.value == self.name:
            self.count += 1
            args = list(updated.args)
            if args and args[-1].star == "**":
                self.other_use = True  # the keywords could clash
            if args:
                args[-1] = args[-1].with_changes(comma=cst.Comma(
                    whitespace_after=cst.SimpleWhitespace(" ")))
            args += [cst.Arg(keyword=cst.Name(self.names[c]), value=cst.Name(c),
                             equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                   whitespace_after=cst.SimpleWhitespace("")),
                             comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                     for c in self.captured]
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(args=args)
        return updated

    def visit_Name(self, node):
        if node.value == self.name:
            self.other_use = True
