"""Objects a spawned worker cannot receive, traced from the loader call: the rule of
the causes whose record has a ``pickle_kind`` (lambda, local, main).

Under spawn and forkserver the loader pickles its dataset, sampler, batch sampler,
collate_fn and worker_init_fn into every worker.  Functions and classes pickle by
qualified name, so a lambda, a function or class defined in a function body (local),
and one defined only in the ``__main__`` guard, a package's ``__main__.py`` or a
notebook cell (main) cannot reach a worker.
"""
import ast
import os

from flake8_dlworker.analysis import frameworks
from flake8_dlworker.analysis.datasets import find_method, self_attribute_values
from flake8_dlworker.analysis.decorators import unpicklable_wrapper
from flake8_dlworker.analysis.flow import default_for_parameter, unpacked_keywords
from flake8_dlworker.analysis.values import argument_for_parameter, functions_called
from flake8_dlworker.analysis.loaders import (
    SENT_TO_WORKERS, forces_fork, is_dataloader_call, may_have_workers, sent_to_workers)
from flake8_dlworker.analysis.guarded import first_guarded_store, guarded_reads
from flake8_dlworker.analysis.module import GUARD, LOCAL, MAIN_FILE, MODULE, NOTEBOOK
from flake8_dlworker.analysis.project import (
    module_functions, named_by_loader_modules, worker_loader_sites)
from flake8_dlworker.analysis.names import PARTIAL
from flake8_dlworker.analysis.processes import pickled_callables
from flake8_dlworker.catalog import RULES, code_for
from flake8_dlworker.rules import Finding

_MAX_DEPTH = 8
#: callables whose function arguments are called and dropped, never stored
_CONSUMERS = frozenset(("sorted", "min", "max", "sum", "any", "all", "list", "tuple",
                        "set", "frozenset", "len", "print", "filter", "map",
                        "functools.reduce", "reduce"))
_DEFINED_IN = {
    GUARD: ("inside the __main__ guard", "define it at module level above the guard"),
    MAIN_FILE: ("in __main__.py", "move it to an importable module"),
    NOTEBOOK: ("in a notebook cell", "move it into a module beside the notebook and import it"),
}
#: the words before a definition's name, for reporting at the name
_KEYWORD = {ast.ClassDef: "class ", ast.FunctionDef: "def ", ast.AsyncFunctionDef: "async def "}


#: methods whose function argument runs in the main process and is not kept: Hugging
#: Face ``datasets.Dataset.map`` / ``filter`` (torch datapipes and webdataset pipelines,
#: which keep it, excepted)
_EAGER_METHODS = frozenset(("map", "filter"))
#: container methods whose arguments become items of the container
_ADDING_METHODS = frozenset(("append", "extend", "insert", "add", "update", "setdefault"))
#: dataset methods that keep the function they are given (Hugging Face datasets)
_KEEPING_METHODS = frozenset(("set_transform", "with_transform"))


def findings(scan):
    """Nothing is pickled under fork."""
    if scan.start_method == "fork":
        return ()
    found = list(check(scan.facts, scan.start_method, scan.project))
    if not scan.notebook:
        found.extend(factory_classes_handed_elsewhere(scan.facts, scan.start_method))
    return found


def factory_classes_handed_elsewhere(facts, method):
    """DLW103 in a factory's own module, at the class its body defines and returns
    (``def make_dataset(): class Squares(Dataset): ...; return Squares``), when another
    module of the project hands it to a loader whose workers are not forked
    (analysis/project.py): the file where the code must change."""
    named = named_by_loader_modules(facts.filename, facts.module.bindings)
    factories = {}
    for name, scope in module_functions(facts, sorted(named)):
        for value in scope.returns:
            made = value.func if isinstance(value, ast.Call) else value
            for local in scope.bindings.get(made.id, ()) if isinstance(
                    made, ast.Name) else ():
                if isinstance(local.value, ast.ClassDef):
                    factories.setdefault(name, []).append(local.value)
    if not factories:
        return
    sites = worker_loader_sites(facts.filename, {c.name for n in factories
                                                 for c in factories[n]}, factories)
    here = os.path.dirname(os.path.realpath(facts.filename))
    code = code_for("pickle_kind", "local")
    for name in factories:
        for cls in factories[name]:
            spawned = sorted(site for site in sites.get(cls.name, ()) if not site[2])
            if not spawned:
                continue
            role = "part of the dataset (handed to DataLoader workers at %s:%d)" % (
                os.path.relpath(spawned[0][0], here), spawned[0][1])
            yield Finding(cls.lineno, cls.col_offset, code, RULES[code].message.format(
                kind="class", name=cls.name, scope=name, role=role, method=method))


def check(facts, method, project):
    seen = set()
    for expr, role, scope in _pickled(facts):
        tracer = _Tracer(facts, method, expr, role, project)
        tracer.trace(expr, scope, role, 0)
        for finding in tracer.findings:
            key = finding[:3]
            if key not in seen:
                seen.add(key)
                yield finding


def _pickled(facts):
    """(expression, role, scope) for everything a worker process receives by pickling."""
    hf = frameworks.uses_frameworks(facts)
    for call, scope, _owner in facts.calls:
        if not is_dataloader_call(call, scope, facts):
            for expr, role in pickled_callables(call, scope, facts):
                yield expr, role, scope
            if hf and facts.qualname(call.func, scope) in frameworks.HF_TRAINERS:
                for expr, role in frameworks.hf_sent(call, scope, facts):
                    yield expr, role, scope
            if hf:
                for expr, role in frameworks.lightning_sent(call, scope, facts):
                    yield expr, role, scope
                    yield from _loader_without_workers(expr, scope, facts)
            continue
        if not may_have_workers(call) or forces_fork(call):
            continue
        for expr, role in sent_to_workers(call):
            yield expr, role, scope
        for name, expr, expr_scope in unpacked_keywords(call, scope, facts):
            if name in SENT_TO_WORKERS:  # DataLoader(ds, **loader_args)
                yield expr, name, expr_scope


def _loader_without_workers(expr, scope, facts):
    """What a loader without workers handed to a spawning Lightning Trainer carries: the
    Trainer pickles the loader itself into the ranks (a loader with workers is checked
    where it is built)."""
    found = [(expr, scope)]
    if isinstance(expr, ast.Name):
        found = [(b.value, b.scope) for b in facts.lookup(expr.id, scope)]
    for call, call_scope in found:
        if isinstance(call, ast.Call) and is_dataloader_call(call, call_scope, facts) \
                and not may_have_workers(call):
            for sent, role in sent_to_workers(call):
                yield sent, role, call_scope


def _name_at(node):
    """(line, column) of a definition's name, as ``class Name`` is written with one
    space. A definition that only a notebook's ``__main__`` holds is reported there: the
    cell to move into a module is the one that defines it, often far from the cell that
    builds the loader."""
    return node.lineno, node.col_offset + len(_KEYWORD[type(node)])


def _role_text(role):
    return "part of the dataset" if role == "dataset" else role


class _Tracer:
    """Follows one argument of a loader call to what it carries into the worker."""

    __slots__ = ("facts", "method", "top", "role", "findings", "visited", "project",
                 "elsewhere")

    def __init__(self, facts, method, top, role, project):
        self.facts = facts
        self.method = method
        self.top = top          # a definition is reported at it (in a notebook: _name_at)
        self.role = role
        self.findings = []
        self.visited = set()
        self.project = project  # sibling modules, for dataset classes imported from them
        #: the file of ``facts`` when they are another module's than the loader's: what
        #: is found there is reported at the loader argument, naming that file's line
        self.elsewhere = None

    def _beside(self, home):
        """A tracer of the module ``home`` (where a function the loader's module imports
        is defined) that reports into this one's findings."""
        tracer = _Tracer(home, self.method, self.top, self.role, self.project)
        tracer.findings, tracer.visited, tracer.elsewhere = \
            self.findings, self.visited, home.filename
        return tracer

    def trace(self, expr, scope, role, depth):
        if depth > _MAX_DEPTH or id(expr) in self.visited:
            return
        self.visited.add(id(expr))
        if isinstance(expr, ast.Lambda):
            self._lambda(expr, role)
        elif isinstance(expr, ast.Name):
            for binding in self.facts.lookup(expr.id, scope):
                self._binding(binding, role, depth)
        elif isinstance(expr, ast.Call):
            self._call(expr, scope, role, depth)
        elif isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
            for elt in expr.elts:
                self.trace(elt, scope, role, depth + 1)
        elif isinstance(expr, ast.Dict):
            for value in expr.values:
                self.trace(value, scope, role, depth + 1)
        elif isinstance(expr, ast.Starred):
            self.trace(expr.value, scope, role, depth + 1)
        elif isinstance(expr, ast.Attribute):
            self._method(expr, scope, depth)
            for value, value_scope in self_attribute_values(expr, scope, self.facts):
                self.trace(value, value_scope, role, depth + 1)

    def _lambda(self, node, role, elsewhere=None):
        """Report at the lambda, or at the loader argument when it lies in another file."""
        at, role = node, _role_text(role)
        elsewhere = elsewhere or self.elsewhere
        if elsewhere is not None:
            role = "%s (%s:%d)" % (role, os.path.basename(elsewhere), node.lineno)
            at = self.top
        code = code_for("pickle_kind", "lambda")
        text = RULES[code].message.format(role=role, method=self.method)
        self.findings.append(Finding(at.lineno, at.col_offset, code, text))

    def _binding(self, binding, role, depth):
        value = binding.value
        if isinstance(value, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kind = "class" if isinstance(value, ast.ClassDef) else "function"
            self._definition(kind, value.name, binding, role)
            if kind == "function" and value.decorator_list and binding.place not in (
                    LOCAL, GUARD, MAIN_FILE, NOTEBOOK):
                self._decorated(value, binding)
            if isinstance(value, ast.ClassDef):
                self._class_attributes(value, depth)
        elif isinstance(value, ast.expr):
            self.trace(value, binding.scope, role, depth + 1)
            if role == "dataset":
                self._kept_functions(binding, depth)
            if isinstance(value, (ast.List, ast.Dict, ast.Set)):
                self._added_items(binding, role, depth)
        elif isinstance(value, ast.arg):
            self._parameter(binding, role, depth)

    def _decorated(self, function, binding):
        """``@timed def collate``: the name holds what the decorator returned."""
        found = unpicklable_wrapper(function, binding.scope, self.facts)
        if found is not None:
            wrapper, decorator = found
            text = RULES["DLW103"].message.format(
                kind="function", name=wrapper.name, scope=decorator.name,
                role=_role_text(self.role), method=self.method)
            # the wrapper cannot move out of its decorator: it pickles by the decorated
            # function's name once functools.wraps gives it that name
            wrapped = decorator.args.args[0].arg if decorator.args.args else "func"
            text = text.replace("define it at module level", "decorate it with "
                                "@functools.wraps(%s) in %s()" % (wrapped, decorator.name))
            self.findings.append(Finding(self.top.lineno, self.top.col_offset, "DLW103", text))

    def _parameter(self, binding, role, depth):
        """A parameter: its default, and what each caller in this module gives for it,
        reported at the caller's argument."""
        function = binding.scope.node
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        if binding.value in (function.args.vararg, function.args.kwarg):
            return
        default = default_for_parameter(function, binding.name)
        if default is not None:
            self._trace_at(default, binding.scope.parent, role, depth)
        for call, scope, bound in self.facts.summaries.callers(function):
            given = argument_for_parameter(call, function, binding.name, bound)
            if given is not None:
                self._trace_at(given, scope, role, depth)

    def _added_items(self, binding, role, depth):
        """``steps = [...]; steps.append(Lambda(lambda x: ...))``: what is added to a
        container literal later travels with it."""
        for call, scope in self.facts.summaries.calls_on(binding.name, binding.scope):
            if call.func.attr in _ADDING_METHODS:
                for arg in call.args:
                    self.trace(arg, scope, role, depth + 1)

    def _trace_at(self, expr, scope, role, depth):
        """Trace ``expr``, reporting a definition at it rather than at the loader."""
        outer, self.top = self.top, expr
        self.trace(expr, scope, role, depth + 1)
        self.top = outer

    def _kept_functions(self, binding, depth):
        """``ds.set_transform(fn)``: the dataset keeps ``fn`` and takes it to the worker."""
        for call, scope in self.facts.summaries.calls_on(binding.name, binding.scope):
            if call.func.attr in _KEEPING_METHODS:
                for arg in call.args:
                    self.trace(arg, scope, "dataset", depth + 1)

    def _definition(self, kind, name, binding, role):
        """Report a definition that a worker cannot import, at the loader argument."""
        top = self.top
        role = _role_text(self.role)
        if binding.place == MODULE and self.elsewhere is None:
            self._guarded_reads(binding.value)
        if binding.place == LOCAL:
            code = code_for("pickle_kind", "local")
            text = RULES[code].message.format(
                kind=kind, name=name, scope=binding.outer, role=role, method=self.method)
        elif binding.place in _DEFINED_IN:
            where, fix = _DEFINED_IN[binding.place]
            code = code_for("pickle_kind", "main")
            text = RULES[code].message.format(
                kind=kind, name=name, where=where, role=role, fix=fix)
        else:
            return
        if self.elsewhere is not None:  # make_dataset() of a module beside: its class
            text = text.replace(role, "%s (%s:%d)" % (
                role, os.path.basename(self.elsewhere), binding.value.lineno), 1)
        line, col = top.lineno, top.col_offset
        if binding.place == NOTEBOOK:
            line, col = _name_at(binding.value)
        self.findings.append(Finding(line, col, code, text))

    def _guarded_reads(self, definition):
        """A module-level function or class whose code, run in a worker, reads a global
        that only the ``__main__`` guard binds: reported where the guard binds it (the
        line to move above the guard)."""
        key = ("guarded", id(definition))
        if key in self.visited or self.facts.is_main_file:
            return
        self.visited.add(key)
        code = code_for("pickle_kind", "main")
        where, fix = _DEFINED_IN[GUARD]
        for name, _read, reader in guarded_reads(definition, self.facts):
            store = first_guarded_store(self.facts.tree, name)
            if store is None:
                continue
            kind = ("function" if isinstance(store, (ast.FunctionDef, ast.AsyncFunctionDef))
                    else "class" if isinstance(store, ast.ClassDef)
                    else "module" if isinstance(store, (ast.Import, ast.ImportFrom))
                    else "global")
            text = RULES[code].message.format(
                kind=kind, name=name, where=where, role="a name %s() reads" % reader,
                fix=fix)
            line, col = (_name_at(store) if kind in ("function", "class")
                         else (store.lineno, store.col_offset))
            self.findings.append(Finding(line, col, code, text))

    def _call(self, call, scope, role, depth):
        facts = self.facts
        func = call.func
        qualname = facts.qualname(func, scope)
        if is_dataloader_call(call, scope, facts):
            return
        name = qualname or (func.id if isinstance(func, ast.Name) else None)
        if name in _CONSUMERS and not facts.lookup(name, scope):
            return
        if qualname not in PARTIAL and isinstance(func, ast.Name):
            for binding in facts.lookup(func.id, scope):
                if isinstance(binding.value, ast.ClassDef):
                    self._definition("class", binding.value.name, binding, role)
                    self._class_attributes(binding.value, depth, call=call)
                elif isinstance(binding.value, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self._returns(binding.value, role, depth)  # a factory: what it returns
                elif isinstance(binding.value, ast.Call):  # cls = dataset_class(); cls()
                    self._made_by(binding.value, binding.scope, role, depth)
        elif isinstance(func, ast.Call):  # dataset_class(8)(): the class a factory returns
            self._made_by(func, scope, role, depth)
        if qualname and "." in qualname:
            self._imported_class(qualname, depth)
            self._imported_returns(call, scope, role, depth)
        if isinstance(func, ast.Attribute) and func.attr in _EAGER_METHODS \
                and not _is_stage(qualname):  # wds.map(fn): a pipeline stage keeps fn
            if not _is_datapipe(func.value, scope, facts):
                self.trace(func.value, scope, role, depth + 1)
                return
        for arg in call.args:
            self.trace(arg, scope, role, depth + 1)
        for kw in call.keywords:
            if kw.arg != "key":  # sorted(key=...) style: called, not stored
                self.trace(kw.value, scope, role, depth + 1)

    def _made_by(self, factory, scope, role, depth):
        """An instance of what a factory call of this module returns: a class it
        defines in its body, reported at the loader argument."""
        for function, home in functions_called(factory.func, scope, self.facts):
            fn_scope = home.scopes.get(function)
            if fn_scope is None:
                continue
            tracer = self if home is self.facts else self._beside(home)
            for value in _returned(function):  # an instance of a class, not a call's result
                if isinstance(value, ast.Name):
                    for binding in home.lookup(value.id, fn_scope):
                        if isinstance(binding.value, ast.ClassDef):
                            tracer._binding(binding, role, depth + 1)

    def _imported_returns(self, call, scope, role, depth):
        """``DataLoader(make_pipeline(urls))`` with ``make_pipeline`` in a module beside:
        what it returns is traced there and reported at the loader argument."""
        if self.project is None or depth > _MAX_DEPTH:
            return
        for function, home in functions_called(call.func, scope, self.facts):
            if home is not self.facts:
                self._beside(home)._returns(function, role, depth + 1)

    def _returns(self, function, role, depth):
        """What a function of this module returns travels where its call's value goes:
        ``DataLoader(build_dataset())``, ``self.norm = self.make_norm()``."""
        fn_scope = self.facts.scopes.get(function)
        if fn_scope is None or depth > _MAX_DEPTH:
            return
        for value in _returned(function):
            self.trace(value, fn_scope, role, depth + 1)

    def _imported_class(self, qualname, depth):
        """A dataset class imported from a module beside this file."""
        modname, name = qualname.rsplit(".", 1)
        other = self.project.module(modname)
        if other is None:
            return
        for binding in other.module.bindings.get(name, ()):
            if isinstance(binding.value, ast.ClassDef):
                self._class_attributes(binding.value, depth, other)

    def _class_attributes(self, classdef, depth, facts=None, call=None):
        """``self.x = lambda ...`` in ``__init__`` of the class or its bases; with the
        ``call`` that builds it, ``self.x = x`` of a parameter whose default is a
        lambda that the call leaves in place (``def __init__(self, fn=lambda v: v)``)."""
        facts = facts or self.facts
        if depth > _MAX_DEPTH or id(classdef) in self.visited:
            return
        self.visited.add(id(classdef))
        class_scope = facts.scopes.get(classdef)
        if class_scope is None:
            return
        elsewhere = facts.filename if facts is not self.facts else None
        init = class_scope.methods.get("__init__")
        if init is not None:
            for attr, value in init.self_assigns:
                role = "attribute '%s' of %s" % (attr, classdef.name)
                for lam in _stored_lambdas(value):
                    self._lambda(lam, role, elsewhere)
                if elsewhere is None:
                    self._stored_definitions(value, init, role, depth)
                    self._stored_returns(value, init, classdef, role, depth)
                if call is not None and isinstance(value, ast.Name):
                    for lam in _stored_lambdas(_default_left(init.node, value.id, call)):
                        self._lambda(lam, role, elsewhere)
        for base in classdef.bases:
            if isinstance(base, ast.Name):
                for binding in facts.lookup(base.id, class_scope.parent):
                    if isinstance(binding.value, ast.ClassDef):
                        self._class_attributes(binding.value, depth + 1, facts)

    def _stored_definitions(self, value, init, role, depth):
        """Nested functions and classes, and instances of nested classes, kept in an
        attribute, in containers at any depth: ``self.steps = [Jitter(), local_fn]``.
        Reported where the attribute keeps them, in the method that defines them."""
        for part in _stored_parts(value):
            name = part.func if isinstance(part, ast.Call) else part
            if not isinstance(name, ast.Name):
                continue
            for binding in self.facts.lookup(name.id, init):
                if binding.place != LOCAL:
                    continue
                if isinstance(binding.value, ast.ClassDef):
                    kind = "class"
                elif isinstance(binding.value, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                        and part is name:
                    kind = "function"
                else:
                    continue
                outer = self.role, self.top
                self.role, self.top = role, part
                self._definition(kind, binding.value.name, binding, role)
                self.role, self.top = outer

    def _stored_returns(self, value, init, classdef, role, depth):
        """``self.norm = self.make_norm()`` or ``= make_norm()``: what the method or
        function of this module returns is what the attribute keeps."""
        for part in _stored_parts(value):
            if not isinstance(part, ast.Call):
                continue
            func = part.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                    and func.value.id == "self":
                found = find_method(classdef, func.attr, self.facts)
                if found is not None:
                    self._returns_as(found[0], role, depth)
            elif isinstance(func, ast.Name):
                for binding in self.facts.lookup(func.id, init):
                    if isinstance(binding.value, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self._returns_as(binding.value, role, depth)

    def _returns_as(self, function, role, depth):
        outer, self.role = self.role, role
        self._returns(function, role, depth + 1)
        self.role = outer

    def _method(self, attr, scope, depth):
        """``obj.method`` where ``obj`` is an instance of a class a worker cannot import."""
        instances = []
        if isinstance(attr.value, ast.Call):
            instances.append((attr.value, scope))
        elif isinstance(attr.value, ast.Name):
            instances.extend((b.value, b.scope) for b in self.facts.lookup(attr.value.id, scope))
        for value, value_scope in instances:
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
                continue
            for cls in self.facts.lookup(value.func.id, value_scope):
                if isinstance(cls.value, ast.ClassDef):
                    self._definition("method", "%s.%s" % (cls.value.name, attr.attr),
                                     cls, self.role)
        own = _own_class(attr, scope)
        if own is not None:  # self.collate: the instance travels, so its class must import
            for cls in self.facts.lookup(own.name, scope):
                if cls.value is own:
                    self._definition("method", "%s.%s" % (own.name, attr.attr), cls,
                                     self.role)


def _own_class(attr, scope):
    """The class whose method ``scope`` is, when ``attr`` is read from the method's first
    parameter (``self.collate`` inside a method), else None."""
    node = getattr(scope, "node", None)
    if getattr(scope, "cls", None) is None or not isinstance(attr.value, ast.Name) or \
            not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    params = node.args.posonlyargs + node.args.args
    if not params or params[0].arg != attr.value.id or any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list):
        return None
    return scope.cls


def _returned(function):
    """The values of a function's own ``return`` statements (not those of the functions,
    classes and lambdas nested in it)."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            if node.value is not None:
                yield node.value
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                   ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _stored_parts(value, depth=0):
    """The expressions an attribute value keeps: the value, the items of its list, tuple,
    set and dict literals, and the arguments of the constructors it calls, at any depth
    (method calls such as ``df.apply(fn)`` run their argument and are left out)."""
    if depth > _MAX_DEPTH:
        return
    yield value
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        children = value.elts
    elif isinstance(value, ast.Dict):
        children = value.values
    elif isinstance(value, ast.Call) and _constructs(value.func):
        children = list(value.args) + [kw.value for kw in value.keywords]
    else:
        return
    for child in children:
        yield from _stored_parts(child, depth + 1)


def _constructs(func):
    """``Compose(...)``, ``transforms.Lambda(...)``, ``defaultdict(...)``, ``partial(...)``:
    calls that build an object holding their arguments."""
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name[:1].isupper() or name in ("defaultdict", "partial", "dict", "list", "tuple")


def _stored_lambdas(value):
    return [part for part in _stored_parts(value) if isinstance(part, ast.Lambda)]


def _default_left(function, name, call):
    """The default of ``function``'s parameter ``name`` when ``call`` (which calls the
    class whose ``__init__`` it is) gives no value for it, else None."""
    args = function.args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
    if any(isinstance(a, ast.Starred) for a in call.args) or \
            any(kw.arg is None or kw.arg == name for kw in call.keywords):
        return None
    for index, (arg, default) in enumerate(pairs):
        if arg.arg != name:
            continue
        given = index - 1 < len(call.args) if index < len(positional) else False
        return None if given else default  # index 0 is self
    return None


def _is_stage(qualname):
    """``wds.map(fn)``, ``wds.select(fn)``: a pipeline stage built by a library's function,
    which keeps the function it is given (``wds.DataPipeline(*stages)``)."""
    return (qualname or "").startswith(_PIPELINE_LIBRARIES)


_PIPELINE_LIBRARIES = ("torch.utils.data.datapipes", "torchdata", "webdataset.")


def _is_datapipe(expr, scope, facts, depth=0):
    """True when ``expr`` is a torch datapipe or a webdataset pipeline
    (``wds.WebDataset(urls).decode().map(fn)``), whose ``map(fn)`` keeps ``fn``."""
    if depth > 8:
        return False
    if isinstance(expr, ast.Call):
        qualname = facts.qualname(expr.func, scope) or ""
        if qualname.startswith(_PIPELINE_LIBRARIES):
            return True
        return isinstance(expr.func, ast.Attribute) and _is_datapipe(
            expr.func.value, scope, facts, depth + 1)
    if isinstance(expr, ast.Name):
        return any(isinstance(b.value, ast.expr)
                   and _is_datapipe(b.value, b.scope, facts, depth + 1)
                   for b in facts.lookup(expr.id, scope))
    return False
