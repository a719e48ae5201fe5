"""What a decorator leaves under a function's name.

``@timed def collate(batch)`` binds ``collate`` to whatever ``timed(collate)`` returns.
A decorator that returns its nested ``wrapper`` leaves a local object under the name:
pickling it by name finds ``timed.<locals>.wrapper``, which no worker can import.
With ``@functools.wraps(fn)`` on the wrapper (or ``functools.update_wrapper``) the
wrapper takes the function's name and qualified name, and pickling by name finds the
wrapper itself at ``module.collate``: it reaches the worker.

Decorators defined in this module or in a module beside it are read, plain ones
(``@timed``) and factories (``@timed("collate")``); any other is taken to keep the
function picklable.
"""
import ast

from flake8_dlworker.analysis.values import functions_called

_WRAPS = frozenset(("functools.wraps", "functools.update_wrapper"))


def unpicklable_wrapper(function, scope, facts):
    """(wrapper FunctionDef, decorator FunctionDef) when a decorator of ``function``
    (defined in ``scope``) leaves a nested function without ``functools.wraps`` under
    its name, else None."""
    for decorator in function.decorator_list:
        factory = isinstance(decorator, ast.Call)
        func = decorator.func if factory else decorator
        for outer, home in functions_called(func, scope, facts):
            outer_scope = home.scopes.get(outer)
            if outer_scope is None:
                continue
            if factory:  # @timed("x"): timed returns the decorator that is applied
                for inner in _nested_returned(outer, outer_scope, home):
                    found = _bare_wrapper(inner, home.scopes.get(inner), home)
                    if found is not None:
                        return found
            else:
                found = _bare_wrapper(outer, outer_scope, home)
                if found is not None:
                    return found
    return None


def _bare_wrapper(decorator, decorator_scope, facts):
    if decorator_scope is None or _updates_wrapper(decorator, decorator_scope, facts):
        return None
    for wrapper in _nested_returned(decorator, decorator_scope, facts):
        if not any(_is_wraps(d, facts.scopes.get(wrapper).parent, facts)
                   for d in wrapper.decorator_list):
            return wrapper, decorator
    return None


def _nested_returned(function, function_scope, facts):
    """The functions defined in ``function``'s body that it returns by name."""
    found = []
    for value in function_scope.returns:
        if not isinstance(value, ast.Name):
            continue
        for binding in function_scope.bindings.get(value.id, ()):
            if isinstance(binding.value, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and facts.scopes.get(binding.value) is not None:
                found.append(binding.value)
    return found


def _is_wraps(decorator, scope, facts):
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    qualname = facts.qualname(func, scope)
    if qualname is None:  # a decorator this module cannot name may copy the name too
        return not (isinstance(func, ast.Name) and facts.lookup(func.id, scope))
    return qualname in _WRAPS


def _updates_wrapper(decorator, decorator_scope, facts):
    """``functools.update_wrapper(wrapper, fn)`` or a ``wrapper.__qualname__ = ...``
    in the decorator's body: the wrapper takes the function's name."""
    for node in ast.walk(decorator):
        if isinstance(node, ast.Call) and facts.qualname(node.func, decorator_scope) in _WRAPS:
            return True
        if isinstance(node, ast.Attribute) and node.attr == "__qualname__" \
                and isinstance(node.ctx, ast.Store):
            return True
    return False
