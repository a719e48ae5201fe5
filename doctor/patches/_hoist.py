"""Move a definition out of a function or the ``__main__`` guard to module level,
just above the module-level statement that held it, with its comments and decorators."""
import libcst as cst

from doctor.patches import _cst


def _remove(block_owner, stmt):
    """``block_owner`` (a FunctionDef or If) without ``stmt`` in its body; when ``stmt``
    was the first statement, the blank lines the next one had go too."""
    body = list(block_owner.body.body)
    index = body.index(stmt)
    del body[index]
    if not body:
        return None
    if index == 0:
        blank, comments = _cst.split_leading(body[0].leading_lines)
        body[0] = body[0].with_changes(leading_lines=comments)
    return block_owner.with_changes(body=block_owner.body.with_changes(body=body))


def hoist(module, owner, top, definition, replace_refs=None, moved=None):
    """The module with ``definition`` (a statement directly in ``owner``'s body) moved to
    module level above ``top``, as ``moved`` when given (its new form); ``replace_refs``
    maps the owner to its final form."""
    new_owner = _remove(owner, definition)
    if new_owner is None:
        return None
    if replace_refs is not None:
        new_owner = replace_refs(new_owner)
    new_top = new_owner if top is owner else top.deep_replace(owner, new_owner)
    moved, new_top = place_above(definition if moved is None else moved, new_top)
    body = []
    for stmt in module.body:
        if stmt is top:
            body.extend([moved, new_top])
        else:
            body.append(stmt)
    return module.with_changes(body=body)


def place_above(definition, top):
    """(definition, top) with PEP 8's two blank lines around the definition; the blank
    lines above ``top`` now stand above the definition, each keeps its own comments."""
    blank, top_comments = _cst.split_leading(top.leading_lines)
    _, comments = _cst.split_leading(definition.leading_lines)
    blank = list(blank) + [_cst.EMPTY] * max(0, 2 - len(blank))
    return (definition.with_changes(leading_lines=blank + comments),
            top.with_changes(leading_lines=[_cst.EMPTY] * 2 + top_comments))


def definitions_named(tree, name):
    return [node for node in tree.nodes((cst.FunctionDef, cst.ClassDef))
            if node.name.value == name]


def contains(tree, outer, line):
    where = tree.pos[outer]
    return where.start.line <= line <= where.end.line
