"""What the patch makers share: a parsed module with positions and parents, names,
imports, and moving statements without losing their comments.

libcst keeps every byte of the source (comments, blank lines, quotes, trailing
commas), and its blocks are indented relative to their parent, so a statement moved
to another depth renders at the new depth with its own formatting.
"""
import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

EMPTY = cst.EmptyLine()


class Tree:
    """A module with the position and parent of every node."""

    def __init__(self, source):
        wrapper = MetadataWrapper(cst.parse_module(source))
        self.wrapper = wrapper
        self.module = wrapper.module
        self.pos = wrapper.resolve(PositionProvider)
        self.parents = wrapper.resolve(ParentNodeProvider)

    def at(self, line, col, kind=cst.CSTNode):
        """Nodes of ``kind`` starting at (line, col); col 0-based, as ``ast`` gives it."""
        return [node for node, where in self.pos.items()
                if isinstance(node, kind) and where.start.line == line
                and where.start.column == col]

    def first_at(self, line, col, kind=cst.CSTNode):
        found = self.at(line, col, kind)
        return found[0] if found else None

    def on_line(self, line, kind=cst.CSTNode):
        return [node for node, where in self.pos.items()
                if isinstance(node, kind) and where.start.line <= line <= where.end.line]

    def ancestors(self, node):
        while node in self.parents:
            node = self.parents[node]
            yield node

    def top_statement(self, node):
        """The statement of the module's body that holds ``node``."""
        for parent in [node, *self.ancestors(node)]:
            if parent in self.module.body:
                return parent
        return None

    def functions_around(self, node):
        return [a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)]

    def nodes(self, kind):
        return [node for node in self.pos if isinstance(node, kind)]

    def line(self, node):
        return self.pos[node].start.line


def code(node):
    return cst.Module(body=[]).code_for_node(node)


def dotted(node):
    """'a.b.c' for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted(node.value)
        return head and "%s.%s" % (head, node.attr.value)
    return None


def is_main_guard(stmt):
    """``if __name__ == "__main__":`` (either side, either quote)."""
    if not isinstance(stmt, cst.If) or not isinstance(stmt.test, cst.Comparison):
        return False
    test = stmt.test
    if len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = [test.left, test.comparisons[0].comparator]
    names = [s for s in sides if isinstance(s, cst.Name) and s.value == "__name__"]
    strings = [s for s in sides if isinstance(s, cst.SimpleString)
               and s.evaluated_value == "__main__"]
    return len(names) == 1 and len(strings) == 1


def is_import(stmt):
    return (isinstance(stmt, cst.SimpleStatementLine)
            and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body))


def is_docstring(stmt):
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


class _Names(cst.CSTVisitor):
    """Every identifier read or written under a node (attribute names and keyword
    argument names excluded: they are not variables)."""

    def __init__(self):
        self.loaded = []
        self.stored = set()

    def visit_Attribute(self, node):
        node.value.visit(self)
        return False

    def visit_Arg(self, node):
        node.value.visit(self)
        return False

    def visit_Param(self, node):
        self.stored.add(node.name.value)
        if node.default is not None:
            node.default.visit(self)
        if node.annotation is not None:
            node.annotation.visit(self)
        return False

    def visit_Name(self, node):
        self.loaded.append(node.value)

    def visit_AssignTarget(self, node):
        self._store(node.target)

    def visit_CompFor(self, node):
        self._store(node.target)

    def visit_For(self, node):
        self._store(node.target)

    def visit_AsName(self, node):
        self._store(node.name)

    def visit_AnnAssign(self, node):
        self._store(node.target)

    def visit_AugAssign(self, node):
        self._store(node.target)

    def visit_NamedExpr(self, node):
        self._store(node.target)

    def visit_FunctionDef(self, node):
        self.stored.add(node.name.value)

    def visit_ClassDef(self, node):
        self.stored.add(node.name.value)

    def visit_ImportAlias(self, node):
        if node.asname is None:
            self.stored.add((dotted(node.name) or "").split(".")[0])
        return False

    def _store(self, target):
        if isinstance(target, cst.Name):
            self.stored.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._store(element.value)
        elif isinstance(target, cst.StarredElement):
            self._store(target.value)


def names(node):
    """(names read, names bound) anywhere under ``node``."""
    visitor = _Names()
    node.visit(visitor)
    return set(visitor.loaded), visitor.stored


def free_names(node):
    """Names ``node`` reads that it does not bind itself (its own name excluded)."""
    loaded, stored = names(node)
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        # the body's own bindings, parameters included; the decorators and defaults are
        # evaluated outside, but they are read in the same enclosing scope anyway
        stored = stored | {node.name.value}
    if isinstance(node, cst.Lambda):
        stored = stored | {p.name.value for p in _params(node.params)}
    return loaded - stored


def _params(params):
    found = list(params.params) + list(params.kwonly_params) + list(params.posonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            found.append(star)
    return found


def bound_in_function(func):
    """Names bound in a function's own scope: parameters, assignments, nested defs."""
    bound = {p.name.value for p in _params(func.params)}
    for stmt in func.body.body:
        bound |= _bound_by(stmt)
    return bound


def _bound_by(stmt):
    """Names a statement binds in the scope it runs in (not inside nested defs)."""
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return {stmt.name.value}
    visitor = _Bound()
    stmt.visit(visitor)
    return visitor.stored


class _Bound(_Names):
    def visit_FunctionDef(self, node):
        self.stored.add(node.name.value)
        return False

    def visit_ClassDef(self, node):
        self.stored.add(node.name.value)
        return False

    def visit_Lambda(self, node):
        return False

    def visit_CompFor(self, node):
        return None  # comprehension variables are their own scope


def module_names(module):
    """Names bound at module level, and every identifier used anywhere."""
    bound = set()
    for stmt in module.body:
        bound |= _bound_by(stmt)
    loaded, stored = names(module)
    return bound, loaded | stored


def unique(name, taken):
    candidate, n = name, 2
    while candidate in taken:
        candidate = "%s_%d" % (name, n)
        n += 1
    return candidate


def split_leading(lines):
    """(blank lines before the first comment, the rest) of a statement's leading_lines."""
    lines = list(lines)
    i = 0
    while i < len(lines) and lines[i].comment is None:
        i += 1
    return lines[:i], lines[i:]


def at_module_level(stmt, blank=2):
    """A definition moved to module level: ``blank`` empty lines, then its own comments."""
    _, comments = split_leading(stmt.leading_lines)
    return stmt.with_changes(leading_lines=[EMPTY] * blank + comments)


def import_name(module, mod, name):
    """How ``mod.name`` is spelled here with the imports the module has, or None:
    ``functools.partial`` after ``import functools``, ``partial`` after
    ``from functools import partial``."""
    for stmt in module.body:
        if not is_import(stmt):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if dotted(alias.name) == mod:
                        local = alias.asname.name.value if alias.asname else mod
                        return "%s.%s" % (local, name)
            elif isinstance(small, cst.ImportFrom) and not small.relative:
                if dotted(small.module) == mod and not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        if alias.name.value == name:
                            return alias.asname.name.value if alias.asname else name
    return None


def has_plain_import(module, top):
    """True when ``import top`` (or ``import top.x``) binds the name ``top``."""
    for stmt in module.body:
        if is_import(stmt):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if alias.asname is None and (dotted(alias.name) or "").split(".")[0] == top:
                            return True
    return False


def add_import(module, line, last=False):
    """The module with ``line`` (an import statement) placed before its first
    import that is not ``from __future__`` (the comments above that import stay on top),
    or with ``last`` right after the last import of the leading block."""
    new = cst.parse_statement(line + "\n")
    body = list(module.body)
    if last:
        end = None
        for i, stmt in enumerate(body):
            if is_import(stmt):
                end = i
            elif not is_docstring(stmt):
                break
        if end is not None:
            body.insert(end + 1, new)
            return module.with_changes(body=body)
    for i, stmt in enumerate(body):
        if is_import(stmt) and not (isinstance(stmt.body[0], cst.ImportFrom)
                                    and dotted(stmt.body[0].module) == "__future__"):
            new = new.with_changes(leading_lines=stmt.leading_lines)
            body[i:i + 1] = [new, stmt.with_changes(leading_lines=[])]
            return module.with_changes(body=body)
    # no import at all: after the docstring and __future__ imports
    i = 0
    while i < len(body) and (is_docstring(body[i]) or is_import(body[i])):
        i += 1
    body.insert(i, new)
    return module.with_changes(body=body)


def from_import(module, mod, name):
    """(the module, how ``mod.name`` is spelled in it): the spelling its imports already
    give; else ``name`` added to its ``from mod import ...``; else ``mod.name`` after an
    ``import`` of mod's top package; else a new ``from mod import name`` right after the
    leading imports."""
    spelled = import_name(module, mod, name)
    if spelled is not None:
        return module, spelled
    for stmt in module.body:
        if not is_import(stmt):
            continue
        for small in stmt.body:
            if isinstance(small, cst.ImportFrom) and not small.relative and \
                    dotted(small.module) == mod and \
                    not isinstance(small.names, cst.ImportStar) and small.lpar is None:
                names = list(small.names)
                names[-1] = names[-1].with_changes(comma=cst.Comma(
                    whitespace_after=cst.SimpleWhitespace(" ")))
                names.append(cst.ImportAlias(name=cst.Name(name)))
                return module.deep_replace(small, small.with_changes(names=names)), name
    if has_plain_import(module, mod.split(".")[0]):
        return module, "%s.%s" % (mod, name)
    return add_import(module, "from %s import %s" % (mod, name), last=True), name


def partial_name(module):
    """(spelling of functools.partial, module with the import it needs)."""
    spelled = import_name(module, "functools", "partial")
    if spelled:
        return spelled, module
    return "functools.partial", add_import(module, "import functools")


def replace(module, old, new):
    return module.deep_replace(old, new)


def loader_keywords(tree, name, line=None, accept=lambda value: True):
    """The ``name=`` arguments of the ``DataLoader(...)`` calls of ``tree`` (those whose
    call spans ``line``, when given) whose value ``accept`` takes."""
    found = []
    for arg in tree.nodes(cst.Arg):
        if arg.keyword is None or arg.keyword.value != name or not accept(arg.value):
            continue
        call = tree.parents.get(arg)
        if not isinstance(call, cst.Call) or \
                (dotted(call.func) or "").split(".")[-1] != "DataLoader":
            continue
        where = tree.pos[call]
        if line is None or where.start.line <= line <= where.end.line:
            found.append(arg)
    return found


def rewrite_loader_keyword(source, name, line, accept, rewrite, module_name):
    """``source`` with the value of every ``name=`` of the ``DataLoader(...)`` at ``line``
    that ``accept`` takes replaced by the expression ``rewrite(value)`` gives, which uses
    ``module_name`` (imported plainly when it is not yet); None when there is none."""
    tree = Tree(source)
    module = tree.module
    targets = loader_keywords(tree, name, line, accept)
    if not targets:
        return None
    imported = has_plain_import(module, module_name)
    for arg in targets:
        module = module.deep_replace(arg, arg.with_changes(
            value=cst.parse_expression(rewrite(arg.value))))
    if not imported:
        module = add_import(module, "import %s" % module_name)
    return module.code
