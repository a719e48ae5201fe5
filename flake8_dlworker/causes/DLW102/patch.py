"""DLW102: a lambda reaches a worker -> a module-level function named from its role.

``collate_fn=lambda b: b`` becomes ``collate_fn=_collate`` with ``def _collate(b)``
above the statement that held the lambda; a lambda that reads names of the function
around it gets them as keyword-only parameters, bound with ``functools.partial``; of an
object it only reads attributes from (``self.scale``), it gets those values, not the
object (a DataModule would carry its Trainer, and the loader itself, into every worker).
A module-level ``name = lambda ...`` becomes ``def name(...)`` in place.
"""
import re

import libcst as cst

from doctor.patches import _cst, _hoist

CODE = "DLW102"
STATIC = True

#: keyword roles with a fixed name; other roles are named from what the body does
_ROLE_NAMES = {"collate_fn": "_collate", "worker_init_fn": "_worker_init",
               "sampler": "_sampler", "batch_sampler": "_batch_sampler"}
#: builtins whose call converts: ``lambda s: int(s)`` is ``_to_int``
_CONVERSIONS = frozenset(("int", "float", "str", "bool", "bytes", "list", "tuple", "dict",
                          "set", "frozenset", "tensor", "as_tensor", "from_numpy", "array",
                          "asarray"))
_OP_NAMES = ((cst.Multiply, "_scale"), (cst.Divide, "_scale"), (cst.Add, "_shift"),
             (cst.Subtract, "_shift"), (cst.Power, "_power"), (cst.Modulo, "_wrap"))


def fix(source, finding, facts):
    tree = _cst.Tree(source)
    node = tree.first_at(finding.line, finding.col, cst.Lambda)
    if node is None:
        return None
    top = tree.top_statement(node)
    if top is None:
        return None
    funcs = tree.functions_around(node)
    module = tree.module
    module_bound, used = _cst.module_names(module)

    # name = lambda ... at module level: the same name, as a def
    parent = tree.parents.get(node)
    if not funcs and isinstance(parent, cst.Assign) and parent.value is node \
            and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name) \
            and isinstance(top, cst.SimpleStatementLine) and len(top.body) == 1:
        name = parent.targets[0].target.value
        new = _function(name, node, [], top.leading_lines, top.trailing_whitespace)
        return module.deep_replace(top, new).code

    captured = set()
    for func in funcs:
        captured |= _cst.free_names(node) & _cst.bound_in_function(func)
    name = _cst.unique(_role_name(tree, node), used | module_bound)
    lifted, bound = _attributes_as_values(node, sorted(captured))
    captured = [param for param, _ in bound]
    new_def = _function(name, lifted, captured, (), None)
    new_def = new_def.with_changes(leading_lines=[_cst.EMPTY] * 2)
    if captured:
        partial, _ = _cst.partial_name(module)
        replacement = cst.parse_expression("%s(%s, %s)" % (
            partial, name, ", ".join("%s=%s" % pair for pair in bound)))
    else:
        replacement = cst.Name(name)
    module = module.deep_replace(node, replacement)
    body = list(module.body)
    index = [i for i, stmt in enumerate(tree.module.body) if stmt is top][0]
    new_def, body[index] = _hoist.place_above(new_def, body[index])
    body.insert(index, new_def)
    module = module.with_changes(body=body)
    if captured:
        _, module = _cst.partial_name(module)
    return module.code


def _attributes_as_values(lam, captured):
    """(lambda, [(parameter, value)]): a captured object read only for plain attributes
    (``self.scale``) passes those values, not itself: ``self`` may hold the whole
    trainer, or the loader itself, and would travel to every worker with them."""
    bound = []
    taken = {p.name.value for p in _cst._params(lam.params)} | set(captured)
    for name in captured:
        reads = _attribute_reads(lam.body, name)
        if not reads:
            bound.append((name, name))
            continue
        params = {}
        for attr in sorted(reads):
            params[attr] = _cst.unique(attr, taken)
            taken.add(params[attr])
            bound.append((params[attr], "%s.%s" % (name, attr)))
        lam = lam.with_changes(body=lam.body.visit(_ReadAs(name, params)))
    return lam, bound


def _attribute_reads(body, name):
    """The attributes of ``name`` that ``body`` reads, or None when it uses ``name``
    otherwise (calls a method on it, passes it, assigns to it)."""
    reads, other = set(), []

    class Find(cst.CSTVisitor):
        def visit_Attribute(self, node):
            if isinstance(node.value, cst.Name) and node.value.value == name:
                reads.add(node.attr.value)
                return False
            return True

        def visit_Call(self, node):
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                    and func.value.value == name:
                other.append(node)  # a method: it may read anything of the object

        def visit_Name(self, node):
            if node.value == name:
                other.append(node)
    body.visit(Find())
    return None if other else reads


class _ReadAs(cst.CSTTransformer):
    def __init__(self, name, params):
        super().__init__()
        self.name, self.params = name, params

    def leave_Attribute(self, original, updated):
        if isinstance(original.value, cst.Name) and original.value.value == self.name:
            return cst.Name(self.params[original.attr.value])
        return updated


def _function(name, lam, captured, leading, trailing):
    params = _cst.code(lam.params).strip()
    if captured:
        if lam.params.star_arg is cst.MaybeSentinel.DEFAULT or lam.params.star_arg is None:
            params = ", ".join(p for p in (params, "*", ", ".join(captured)) if p)
        else:
            params = "%s, %s" % (params, ", ".join(captured))
    body = _cst.code(lam.body.with_changes(lpar=[], rpar=[])) if not lam.body.lpar \
        else _cst.code(lam.body)
    if "\n" in body:
        body = "(%s)" % body
    new = cst.parse_statement("def %s(%s):\n    return %s\n" % (name, params, body))
    new = new.with_changes(leading_lines=list(leading))
    if trailing is not None and trailing.comment is not None:
        # the comment of the lambda's line stays on the def's line
        new = new.with_changes(body=new.body.with_changes(header=trailing))
    return new


def _snake(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _body_name(node):
    """A name for what the lambda's body does, or None: ``_identity``, ``_scale``
    (``x * 2``), ``_negate`` (``-x``), ``_to_int`` (``int(s)``, ``Data(...)``: a
    conversion or a class), ``_tokenize`` (``tokenize(s)``), ``_get_txt``
    (``s["txt"]``), ``_double`` (``{"double": ...}``)."""
    body = node.body
    if isinstance(body, cst.Name) and [p.name.value for p in node.params.params] == [
            body.value]:
        return "_identity"
    if isinstance(body, cst.BinaryOperation):
        for op, name in _OP_NAMES:
            if isinstance(body.operator, op):
                return name
    if isinstance(body, cst.UnaryOperation) and isinstance(body.operator, cst.Minus):
        return "_negate"
    if isinstance(body, cst.Call):
        called = (_cst.dotted(body.func) or "").split(".")[-1]
        if called in _CONVERSIONS or called[:1].isupper():
            return "_to_" + _snake(called)
        if called:
            return "_" + _snake(called)
    keys = []
    if isinstance(body, cst.Subscript) and len(body.slice) == 1:
        index = getattr(body.slice[0].slice, "value", None)
        if isinstance(index, cst.SimpleString):
            keys = ["get", str(index.evaluated_value)]
    elif isinstance(body, cst.Dict):
        keys = [str(e.key.evaluated_value) for e in body.elements
                if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)]
        keys = keys[:2] if len(keys) == len(body.elements) else []
    name = re.sub(r"\W+", "_", "_".join(keys)).strip("_").lower()
    return "_" + name if name and name.isidentifier() and not name[0].isdigit() else None


def _role_name(tree, node):
    """``_collate`` for collate_fn, ``_scale`` for ``lambda x: x * 2``, ``_fn`` for self.fn."""
    parent = tree.parents.get(node)
    keyword = parent.keyword.value if isinstance(parent, cst.Arg) and parent.keyword else None
    if keyword in _ROLE_NAMES:
        return _ROLE_NAMES[keyword]
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        target = parent.targets[0].target
        if isinstance(target, cst.Attribute):
            return "_" + target.attr.value.lstrip("_")
        if isinstance(target, cst.Name):
            return "_" + target.value.lstrip("_")
    if isinstance(parent, cst.DictElement) and isinstance(parent.key, cst.SimpleString):
        key = re.sub(r"\W+", "_", str(parent.key.evaluated_value)).strip("_").lower()
        if key and key.isidentifier():
            return "_" + key  # {"double": lambda x: x * 2}: _double
    from_body = _body_name(node)
    if from_body:
        return from_body
    if keyword:
        return "_" + keyword[:-3] if keyword.endswith("_fn") else "_" + keyword
    return "_transform"
