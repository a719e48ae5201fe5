"""One function's own statements: the nodes of its scope (nested definitions not
entered) and the names a value is bound to there."""
import ast

#: definitions that open a scope of their own
NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def walk_scope(node):
    """Every node below ``node`` in its own scope: nested definitions are not entered."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, NESTED):
            yield from walk_scope(child)


def assigned_names(value, statements):
    """The plain names ``value`` is assigned to among ``statements``
    (``loader = DataLoader(...)``)."""
    found = set()
    for node in statements:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is value:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update(t.id for t in targets if isinstance(t, ast.Name))
    return found
