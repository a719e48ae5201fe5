"""DLW103 for a decorator's wrapper: ``@functools.wraps(fn)`` on it, not a hoist.

A decorator that returns its nested ``wrapper`` leaves ``timed.<locals>.wrapper`` under
the decorated function's name. Hoisting the wrapper does not help: the name still holds
a different object than the function pickling looks for. ``functools.wraps(fn)`` gives
the wrapper the function's qualified name, so pickling by name finds the wrapper itself.
"""
import re

import libcst as cst

from doctor.patches import _cst

_TEXT = re.compile(r"function '(\w+)' defined inside (\w+)\(\)")


def fix(source, finding):
    """The source with ``@functools.wraps(<the decorator's parameter>)`` on the wrapper
    the finding names, when that wrapper is what a decorator of the module returns;
    else None."""
    match = _TEXT.search(finding.text)
    if not match:
        return None
    wrapper_name, decorator_name = match.groups()
    tree = _cst.Tree(source)
    used = _decorator_names(tree)
    hits = []
    for decorator in tree.nodes(cst.FunctionDef):
        if decorator.name.value != decorator_name or not _applied(tree, decorator, used):
            continue
        params = list(decorator.params.posonly_params) + list(decorator.params.params)
        wrappers = [s for s in decorator.body.body if isinstance(s, cst.FunctionDef)
                    and s.name.value == wrapper_name]
        if len(params) == 1 and len(wrappers) == 1 and _returns(decorator, wrapper_name):
            hits.append((wrappers[0], params[0].name.value))
    if len(hits) != 1:
        return None
    wrapper, fn = hits[0]
    if fn not in _cst.names(wrapper)[0]:
        return None  # the wrapper never calls the function it wraps
    module = tree.module
    spelled = _cst.import_name(module, "functools", "wraps")
    add = spelled is None and not _cst.has_plain_import(module, "functools")
    spelled = spelled or "functools.wraps"
    decorator = cst.Decorator(decorator=cst.parse_expression("%s(%s)" % (spelled, fn)))
    module = module.deep_replace(
        wrapper, wrapper.with_changes(decorators=[decorator] + list(wrapper.decorators)))
    if add:
        module = _cst.add_import(module, "import functools")
    return module.code


def _decorator_names(tree):
    found = set()
    for node in tree.nodes(cst.Decorator):
        expr = node.decorator
        if isinstance(expr, cst.Call):
            expr = expr.func
        found.add(_cst.dotted(expr))
    return found


def _applied(tree, decorator, used):
    """``@timed``, or ``@named("x")`` where ``named`` returns this decorator."""
    if decorator.name.value in used:
        return True
    for outer in tree.functions_around(decorator)[:1]:
        if outer.name.value in used and _returns(outer, decorator.name.value):
            return True
    return False


def _returns(function, name):
    for stmt in function.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Return) and isinstance(small.value, cst.Name) \
                        and small.value.value == name:
                    return True
    return False
