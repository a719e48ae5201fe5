"""DLW101: unguarded module-level code starts workers -> move the work under the guard.

The statements that do work (loops, calls, assignments whose value calls something)
move, in their order, under ``if __name__ == "__main__":`` at the end of the module
(into the existing guard when the module already ends with one). Imports, function
and class definitions, constants (assignments that call nothing) and the docstring
stay at module level, where spawned workers still find them, and so does any
statement whose names a definition or constant that stays reads: the workers need
those too. When the statement that starts workers is among them there is no patch.
A script that has ``main()`` and calls it unguarded gets the call guarded.
"""
import libcst as cst
import libcst.matchers as m
from libcst.metadata import Assignment, GlobalScope, ScopeProvider

from doctor.patches import _cst

CODE = "DLW101"
STATIC = True
_GUARD = 'if __name__ == "__main__":\n    pass\n'


def _is_constant(stmt):
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.Pass):
            continue
        if not isinstance(small, (cst.Assign, cst.AnnAssign)) or small.value is None:
            return False
        if m.findall(small.value, m.Call() | m.Await() | m.Yield() | m.Lambda()):
            return False
    return True


def _is_import_block(stmt):
    """``try: import x / except ImportError: ...`` and ``if TYPE_CHECKING:``."""
    if isinstance(stmt, cst.Try):
        return all(_cst.is_import(s) for s in stmt.body.body)
    if isinstance(stmt, cst.If) and _cst.dotted(stmt.test) in ("TYPE_CHECKING",
                                                               "typing.TYPE_CHECKING"):
        return True
    return False


def _stays(stmt):
    return (_cst.is_docstring(stmt) or _cst.is_import(stmt) or _is_constant(stmt)
            or isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) or _cst.is_main_guard(stmt)
            or _is_import_block(stmt))


def fix(source, finding, facts):
    tree = _cst.Tree(source)
    module = tree.module
    body = list(module.body)
    work = [s for s in body if not _stays(s)]
    if not work:
        return None
    stays = {id(s) for s in body if _stays(s)}
    scopes = tree.wrapper.resolve(ScopeProvider)
    accesses = []
    for scope in set(scopes.values()):
        if scope is not None:
            accesses.extend(scope.accesses)
    top_of = {}

    def top(node):
        if node not in top_of:
            top_of[node] = tree.top_statement(node)
        return top_of[node]

    changed = True
    while changed:  # what the statements that stay read must stay too
        changed = False
        for access in accesses:
            reader = top(access.node)
            if reader is None or id(reader) not in stays:
                continue
            for referent in access.referents:
                if isinstance(referent, Assignment) and isinstance(referent.scope, GlobalScope):
                    writer = top(referent.node)
                    if writer is not None and id(writer) not in stays:
                        stays.add(id(writer))
                        changed = True
    moved = [s for s in body if id(s) not in stays]
    flagged = [s for s in body if tree.pos[s].start.line <= finding.line <= tree.pos[s].end.line]
    if not moved or any(id(s) in stays for s in flagged):
        return None
    blank, comments = _cst.split_leading(moved[0].leading_lines)
    first = moved[0].with_changes(leading_lines=comments)
    moved = [first] + [_in_block(s, _follows_one_that_stays(body, s, stays))
                       for s in moved[1:]]
    kept = [s for s in body if id(s) in stays]
    last = kept[-1] if kept else None
    if last is not None and _cst.is_main_guard(last) and _after_all(tree, last, work):
        guard_body = list(last.body.body)
        guard = last.with_changes(body=last.body.with_changes(body=moved + guard_body))
        new_body = kept[:-1] + [guard]
        # the blank lines above the moved code stay above the guard's first statement
        return module.with_changes(body=new_body).code
    guard = cst.parse_statement(_GUARD)
    want = 2 if isinstance(last, (cst.FunctionDef, cst.ClassDef)) else (1 if last else 0)
    blank = list(blank) + [_cst.EMPTY] * max(0, want - len(blank))
    guard = guard.with_changes(leading_lines=blank,
                               body=guard.body.with_changes(body=moved))
    return module.with_changes(body=kept + [guard]).code


def _follows_one_that_stays(body, stmt, stays):
    index = next(i for i, s in enumerate(body) if s is stmt)
    return index > 0 and id(body[index - 1]) in stays


def _in_block(stmt, after_a_gap):
    """A moved statement's blank lines as the block shows them: none when a statement
    that stays was above it (those lines set that one apart, as a definition's two),
    the others without the block's indentation; its comments as they are."""
    blank, comments = _cst.split_leading(stmt.leading_lines)
    if after_a_gap:
        blank = []
    return stmt.with_changes(leading_lines=[cst.EmptyLine(indent=False)] * len(blank)
                             + comments)


def _after_all(tree, guard, work):
    return all(tree.pos[s].start.line < tree.pos[guard].start.line for s in work)
