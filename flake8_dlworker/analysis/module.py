"""One walk over a module's ``ast`` tree, collecting the facts the rules need.

The walk keeps a scope stack (module / function / class) and notes, for every
piece of code, whether it runs when the module is imported: spawned workers
re-import the main script as ``__mp_main__``, so every unguarded module-level
statement runs again in each of them, and code inside ``if __name__ ==
"__main__":`` does not.  Names are resolved after the walk, when every binding
is known.
"""
import ast
import os

from flake8_dlworker.analysis.names import canonical, dotted, record_import, relative_module

#: where a definition lives, which decides whether a spawned worker can import it
MODULE = "module"      # module level: importable by qualified name
GUARD = "guard"        # inside ``if __name__ == "__main__":``: missing in ``__mp_main__``
LOCAL = "local"        # inside a function body: ``f.<locals>.X`` cannot be pickled
CLASS = "class"        # a class body: a method, reached through its instance
MAIN_FILE = "main_file"  # a package's ``__main__.py``: not re-imported in workers
NOTEBOOK = "notebook"    # a notebook cell: the kernel's ``__main__``, never re-imported


#: nodes with nothing below them that any rule reads: not worth a trip through the stack
_LEAVES = frozenset(
    [ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break, ast.Continue,
     ast.Nonlocal, ast.alias]
    + ast.operator.__subclasses__() + ast.unaryop.__subclasses__()
    + ast.cmpop.__subclasses__() + ast.boolop.__subclasses__())

#: the nodes the walk records something for; every other node is only descended into
_NOTED = frozenset((
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Call, ast.Import,
    ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For,
    ast.AsyncFor, ast.comprehension, ast.With, ast.AsyncWith, ast.Return, ast.Global))


class Binding:
    """One thing a name was bound to: a definition, an assigned value, or unknown."""

    __slots__ = ("name", "value", "place", "outer", "scope")

    def __init__(self, name, value, place, outer, scope):
        self.name = name
        self.value = value      # FunctionDef / ClassDef / expression / ast.arg / None
        self.place = place
        self.outer = outer      # the enclosing function's name, for LOCAL
        self.scope = scope      # the scope the value's names resolve in


class Scope:
    __slots__ = ("kind", "name", "node", "parent", "bindings", "aliases",
                 "self_assigns", "methods", "place", "returns", "cls", "stars")

    def __init__(self, kind, name, node, parent, place):
        self.kind = kind          # "module" | "function" | "class"
        self.name = name
        self.node = node
        self.parent = parent      # for name resolution: class scopes are skipped
        self.place = place
        self.bindings = {}
        self.aliases = {}
        self.self_assigns = []    # (attribute, value expr) for ``self.x = ...``
        self.methods = {}         # class scopes: method name -> function Scope
        self.returns = []         # function scopes: the expressions ``return`` gives
        self.cls = None           # methods: the ClassDef they belong to
        self.stars = []           # modules named by ``from M import *`` here

    def bind(self, name, value, place, outer=None, scope=None):
        self.bindings.setdefault(name, []).append(
            Binding(name, value, place, outer, scope or self))


class ModuleFacts:
    """Everything the rules read about one module."""

    __slots__ = ("filename", "tree", "module", "is_main_file", "iterations", "calls",
                 "top_statements", "scopes", "project", "_summaries", "_qualnames",
                 "loader_calls", "declared_global")

    def __init__(self, filename, tree):
        self.filename = filename
        self.tree = tree
        self.is_main_file = os.path.basename(filename or "") == "__main__.py"
        self.module = Scope("module", "<module>", tree, None, MODULE)
        #: (iterated expression, scope, owner): owner is an unguarded top-level
        #: statement, a function Scope, or None for code that never runs on import
        self.iterations = []
        #: (Call node, scope, owner)
        self.calls = []
        #: unguarded module-level statements, in order
        self.top_statements = []
        #: FunctionDef / ClassDef node -> the Scope of its body
        self.scopes = {}
        #: the names a ``global`` statement anywhere in the module names
        self.declared_global = set()
        #: the modules beside this one (analysis/project.py), when the rules give one
        self.project = None
        self._summaries = None
        #: qualname's answers, by (expression, scope): asked again and again by the rules
        self._qualnames = {}
        #: analysis.loaders.is_dataloader_call's answers, by (call, scope)
        self.loader_calls = {}

    @property
    def summaries(self):
        """What this module's functions return and who calls them (analysis/flow.py)."""
        if self._summaries is None:
            from flake8_dlworker.analysis.flow import Summaries

            self._summaries = Summaries(self)
        return self._summaries

    # -- name resolution ---------------------------------------------------
    def lookup(self, name, scope):
        while scope is not None:
            found = scope.bindings.get(name)
            if found:
                return found
            scope = scope.parent
        return ()

    def first_bound(self, name, scope, find):
        """The first answer that is not None of ``find(value, its_scope)`` over the
        expressions ``name`` is bound to, seen from ``scope``; None when there is none."""
        for binding in self.lookup(name, scope):
            if isinstance(binding.value, ast.expr):
                found = find(binding.value, binding.scope)
                if found is not None:
                    return found
        return None

    def qualname(self, expr, scope):
        """The canonical qualified name an expression refers to through imports (asked
        once the walk has bound every name: memoised)."""
        key = (expr, scope)
        if key not in self._qualnames:
            self._qualnames[key] = self._qualname(expr, scope)
        return self._qualnames[key]

    def _qualname(self, expr, scope):
        parts = dotted(expr)
        if parts is None:
            return None
        head = parts[0]
        while scope is not None:
            target = scope.aliases.get(head)
            if target is not None:
                return canonical(".".join([target] + parts[1:]))
            if head in scope.bindings:
                return None  # rebound locally: not the imported object
            for module in scope.stars:
                if star_exports(module, head, self.project):
                    return canonical(".".join([module, head] + parts[1:]))
                handed_on = (self.project.reexports(module).get(head)
                             if self.project is not None and module not in _LIBRARY_STARS
                             else None)
                if handed_on is not None:  # from models import *, models imports torch's
                    return canonical(".".join([handed_on] + parts[1:]))
            scope = scope.parent
        return None


#: names ``from M import *`` binds for the libraries whose objects the rules look for
_LIBRARY_STARS = {
    "torch.utils.data": frozenset((
        "DataLoader", "Dataset", "IterableDataset", "TensorDataset", "ConcatDataset",
        "Subset", "ChainDataset", "StackDataset", "get_worker_info", "random_split")),
    "multiprocessing": frozenset(("Pool", "Process", "get_context")),
    "concurrent.futures": frozenset(("ProcessPoolExecutor",)),
}


def star_exports(module, name, project):
    """True when ``from module import *`` binds ``name``: a known library's name, or a
    public top-level name of a module beside the linted file that may build a loader."""
    known = _LIBRARY_STARS.get(module)
    if known is not None:
        return name in known
    if project is None or name.startswith("_"):
        return False
    other = project.module_with_loaders(module)
    return other is not None and name in other.module.bindings


def _compares_main(test, op):
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], op)):
        return False
    sides = (test.left, test.comparators[0])
    has_name = any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
    has_main = any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)
    return has_name and has_main


def is_main_guard(stmt):
    """``if __name__ == "__main__":``, alone or joined by ``and`` to other conditions:
    the body runs only in the main script."""
    if not isinstance(stmt, ast.If):
        return False
    test = stmt.test
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_compares_main(value, ast.Eq) for value in test.values)
    return _compares_main(test, ast.Eq)


def is_inverted_guard(stmt):
    """``if __name__ != "__main__": ... else: ...``: the ``else`` is the guard."""
    return isinstance(stmt, ast.If) and _compares_main(stmt.test, ast.NotEq)


def analyze_module(tree, filename, project=None, notebook=False):
    """``notebook``: the tree is a notebook's code cells end to end. They run in the
    kernel's ``__main__``, where ``__name__ == "__main__"`` holds, so a guard is an
    ordinary ``if``, and no worker re-runs or re-imports any of it."""
    facts = ModuleFacts(filename, tree)
    facts.project = project
    walker = _Walker(facts)
    module = facts.module
    if notebook:
        for stmt in tree.body:
            walker.top(stmt, NOTEBOOK)
        _mark_constant_workers(facts)
        return facts
    top_place = MAIN_FILE if facts.is_main_file else MODULE
    for stmt in tree.body:
        guarded, unguarded = None, [stmt]
        if is_main_guard(stmt):
            guarded, unguarded = stmt.body, stmt.orelse
        elif is_inverted_guard(stmt):
            guarded, unguarded = stmt.orelse, stmt.body
        if guarded is not None:
            walker.visit(stmt.test, module, None, GUARD)
            for inner in guarded:
                walker.visit(inner, module, None, GUARD)
        for inner in unguarded:
            walker.top(inner, top_place)
    _mark_constant_workers(facts)
    return facts


def _mark_constant_workers(facts):
    """``num_workers = 0`` once at module level, then ``num_workers=num_workers``: the
    name at the call is marked as the constant it always is (analysis.loaders reads it)."""
    declared = facts.declared_global  # a ``global`` statement may rebind it from a function
    for call, scope, _owner in facts.calls:
        for kw in call.keywords:
            if kw.arg != "num_workers" or not isinstance(kw.value, ast.Name):
                continue
            bindings = facts.lookup(kw.value.id, scope)
            if kw.value.id not in declared and len(bindings) == 1 \
                    and bindings[0].scope is facts.module \
                    and isinstance(bindings[0].value, ast.Constant) \
                    and type(bindings[0].value.value) is int:
                kw.value.dlw_constant = bindings[0].value.value


class _Walker:
    __slots__ = ("facts",)

    def __init__(self, facts):
        self.facts = facts

    def top(self, stmt, place):
        # A package's __main__.py and a notebook are not re-run in workers (spawn skips
        # "__main__" module names), so their module-level code starts nothing twice.
        owner = None if place in (MAIN_FILE, NOTEBOOK) else stmt
        if owner is not None:
            self.facts.top_statements.append(stmt)
        self.visit(stmt, self.facts.module, owner, place)

    def visit(self, node, scope, owner, place):
        # An explicit stack instead of recursion: deep expressions stay cheap.
        stack = [(node, scope, owner, place)]
        facts = self.facts
        while stack:
            node, scope, owner, place = stack.pop()
            if type(node) not in _NOTED:
                _push_children(node, stack, scope, owner, place)
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._function(node, scope, owner, place, stack)
                continue
            if isinstance(node, ast.ClassDef):
                self._class(node, scope, owner, place, stack)
                continue
            if isinstance(node, ast.Lambda):
                # a lambda's body runs only when called
                for d in node.args.defaults + [d for d in node.args.kw_defaults if d]:
                    stack.append((d, scope, owner, place))
                stack.append((node.body, scope, None, place))
                continue
            if isinstance(node, ast.Call):
                facts.calls.append((node, scope, owner))
            elif isinstance(node, ast.Global):
                facts.declared_global.update(node.names)
                continue
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                record_import(node, scope.aliases, facts.filename)
                if isinstance(node, ast.ImportFrom) and node.level:
                    self._relative(node, scope)
                elif isinstance(node, ast.ImportFrom) and node.module \
                        and any(alias.name == "*" for alias in node.names):
                    scope.stars.append(node.module)
                continue
            elif isinstance(node, ast.Return):
                if node.value is not None:
                    scope.returns.append(node.value)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    self._bind_target(target, node.value, scope, place)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                if node.value is not None:
                    self._bind_target(node.target, node.value, scope, place)
            elif isinstance(node, ast.NamedExpr):
                self._bind_target(node.target, node.value, scope, place)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                facts.iterations.append((node.iter, scope, owner))
                self._bind_target(node.target, None, scope, place)
            elif isinstance(node, ast.comprehension):
                facts.iterations.append((node.iter, scope, owner))
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        self._bind_target(item.optional_vars, item.context_expr, scope, place)
            _push_children(node, stack, scope, owner, place)

    def _relative(self, node, scope):
        """``from .data import *`` and the folder its package lies in, for the project."""
        module = relative_module(self.facts.filename, node.level, node.module)
        if module is None:
            return
        if any(alias.name == "*" for alias in node.names):
            scope.stars.append(module)
        if self.facts.project is not None:
            self.facts.project.add_package(self.facts.filename)

    def _bind_target(self, target, value, scope, place):
        if isinstance(target, ast.Name):
            scope.bind(target.id, value, place, _outer(scope))
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = _elements(value, len(target.elts))
            for elt, elt_value in zip(target.elts, values):
                self._bind_target(elt, elt_value, scope, place)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None, scope, place)
        elif (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
              and target.value.id == "self" and scope.kind == "function"
              and value is not None):
            scope.self_assigns.append((target.attr, value))

    def _function(self, node, scope, owner, place, stack):
        scope.bind(node.name, node, place, _outer(scope))
        for d in node.decorator_list + node.args.defaults + [
                d for d in node.args.kw_defaults if d]:
            stack.append((d, scope, owner, place))
        parent = scope.parent if scope.kind == "class" else scope
        inner = Scope("function", node.name, node, parent, LOCAL)
        self.facts.scopes[node] = inner
        if scope.kind == "class":
            scope.methods[node.name] = inner
            inner.cls = scope.node
        args = node.args
        for arg in args.posonlyargs + args.args + args.kwonlyargs:
            inner.bind(arg.arg, arg, LOCAL)
        for arg in (args.vararg, args.kwarg):
            if arg is not None:
                inner.bind(arg.arg, arg, LOCAL)
        for stmt in node.body:
            stack.append((stmt, inner, inner, LOCAL))

    def _class(self, node, scope, owner, place, stack):
        scope.bind(node.name, node, place, _outer(scope))
        for d in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            stack.append((d, scope, owner, place))
        parent = scope.parent if scope.kind == "class" else scope
        inner = Scope("class", node.name, node, parent, CLASS)
        self.facts.scopes[node] = inner
        for stmt in node.body:
            stack.append((stmt, inner, owner, CLASS))


#: fields that never hold a node, or only leaves (a name, a number, ``ctx``, aliases)
_SCALAR_FIELDS = frozenset((
    "id", "ctx", "attr", "arg", "name", "names", "module", "level", "kind", "type_comment",
    "conversion", "is_async", "simple", "tag", "rest", "kwd_attrs"))
#: node type -> its fields that may hold a node the walk enters, in ``_fields`` order
_CHILD_FIELDS = {}


def _push_children(node, stack, scope, owner, place):
    """``ast.iter_child_nodes(node)``, in its order, leaves left out, onto the stack
    (without its generators: the walk visits every node of the module)."""
    fields = _CHILD_FIELDS.get(type(node))
    if fields is None:
        fields = _CHILD_FIELDS[type(node)] = tuple(
            name for name in node._fields if name not in _SCALAR_FIELDS)
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            for item in value:
                if type(item) not in _LEAVES and isinstance(item, ast.AST):
                    stack.append((item, scope, owner, place))
        elif type(value) not in _LEAVES and isinstance(value, ast.AST):
            stack.append((value, scope, owner, place))


#: calls that hand back the objects they are given, in order (accelerate's prepare)
_PASS_THROUGH = frozenset(("prepare",))


def _elements(value, count):
    """What each name of ``a, b = value`` is bound to, where the value says it."""
    if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == count and not any(
            isinstance(elt, ast.Starred) for elt in value.elts):
        return value.elts
    if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr in _PASS_THROUGH and len(value.args) == count
            and not any(isinstance(arg, ast.Starred) for arg in value.args)):
        return value.args
    return [None] * count


def _outer(scope):
    """The nearest enclosing function's name, for ``f.<locals>`` messages."""
    while scope is not None and scope.kind == "class":
        scope = scope.parent
    if scope is not None and scope.kind == "function":
        return scope.name
    return None
