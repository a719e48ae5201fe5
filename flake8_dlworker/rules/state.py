"""DLW108 and DLW111: what a dataset keeps on ``self`` from ``__init__``.

Every worker gets a copy of the dataset as it stood after ``__init__``: pickled
under spawn and forkserver, inherited under fork.  An open handle cannot be
pickled, and some (HDF5, lmdb, sqlite) are unsafe to share across fork (DLW108);
a random generator object arrives in the same state in every worker (DLW111).
"""
import ast
import os

from flake8_dlworker.analysis import datasets
from flake8_dlworker.analysis.flow import returned_values
from flake8_dlworker.analysis.loaders import argument, forces_fork, literal, value_of
from flake8_dlworker.analysis.module import MODULE
from flake8_dlworker.analysis.project import (
    module_functions, named_by_loader_modules, worker_loader_sites)
from flake8_dlworker.catalog import RULES
from flake8_dlworker.handles import HANDLES as KNOWN
from flake8_dlworker.rules import Finding

#: qualified name of the call -> (what the message calls it, unsafe to share across fork):
#: the known handles of the record (flake8_dlworker.handles)
HANDLES = {name: (handle.words, handle.fork_unsafe) for name, handle in KNOWN.items()}
#: progress bars that keep their output file, unless made with ``disable=``
PROGRESS_BARS = frozenset(name for name, handle in KNOWN.items() if handle.quiet_when_disabled)
#: qualified name -> how the DLW111 message names the generator
GENERATORS = {
    "numpy.random.default_rng": "np.random.default_rng",
    "numpy.random.RandomState": "np.random.RandomState",
    "numpy.random.Generator": "np.random.Generator",
    "random.Random": "random.Random",
}
#: (handle, method) -> the handle the method returns
_DERIVED = {
    ("an h5py.File", "get"): ("an h5py dataset", True),
    ("an lmdb environment", "begin"): ("an lmdb transaction", True),
    ("a sqlite3 connection", "cursor"): ("a sqlite3 cursor", True),
    ("a sqlite3 connection", "execute"): ("a sqlite3 cursor", True),
    ("an open zip archive", "open"): ("an open file", False),
    ("an open tar archive", "extractfile"): ("an open file", False),
}
#: how many objects deep a handle is looked for behind a dataset attribute
_HELD_DEPTH = 2
#: generator methods that reseed it in place
_RESEED_METHODS = frozenset(("seed", "manual_seed", "setstate", "set_state"))
#: methods that return the same generator, seeded
_SEEDING = frozenset(("manual_seed",))


def findings(scan):
    found = list(check(scan.workers, scan.facts, scan.start_method, scan.project))
    if not scan.notebook:
        found.extend(handed_elsewhere(scan.facts, scan.start_method, found))
    return found


def handed_elsewhere(facts, method, reported=()):
    """DLW108 (and DLW111) in the dataset's own module, at the line that keeps the handle
    (the generator), for a class that another module of the project hands to a loader
    with workers (analysis/project.py): the file where the code must change. A generator
    is reported only for a loader given no ``worker_init_fn`` (one may reseed it)."""
    classes = {}
    for name, bindings in facts.module.bindings.items():
        for binding in bindings:
            if isinstance(binding.value, ast.ClassDef) and binding.place == MODULE:
                classes.setdefault(name, []).append(binding.value)
    if not classes:
        return
    # cheap first: a class (or a function of this module that returns one) some loader
    # module names, then one that keeps a handle, and only then the analysis of the
    # modules that may hand it to workers
    named = named_by_loader_modules(facts.filename, facts.module.bindings)
    if not named:
        return
    factories = _factories(facts, classes, named)
    kept = {}
    for name in sorted({n for n in named if n in classes}
                       | {c for n in named for c in factories.get(n, ())}):
        for node in classes[name]:
            dataset = datasets.DatasetClass(node, None, None, facts)
            if any(True for fork in (False, True)
                   for _found in _handles(dataset, fork, beside=False)) \
                    or _keeps_generator(dataset):
                kept.setdefault(name, []).append(node)
    if not kept:
        return
    words = set(kept) | {n for n, made in factories.items() if made & set(kept)}
    sites = worker_loader_sites(facts.filename, kept, words)
    seen = {(f.line, f.col, f.code) for f in reported}
    here = os.path.dirname(os.path.realpath(facts.filename))
    for name, loaders in sorted(sites.items()):
        fork = method == "fork" or all(site[2] for site in loaders)
        where = _handed_at(min(loaders), here)
        bare = sorted(site for site in loaders if not site[3])  # no worker_init_fn
        for node in kept[name]:
            dataset = datasets.DatasetClass(node, None, None, facts)
            found = [(code, value, words) for code, value, words, home
                     in _handles(dataset, fork, beside=False) if home is facts]
            if bare:
                found.extend((code, value, dict(words, where=_handed_at(bare[0], here)))
                             for code, value, words in _generators(
                                 dataset, None, None, facts,
                                 method == "fork" or all(site[2] for site in bare)))
            for code, value, words in found:
                if (value.lineno, value.col_offset, code) in seen:
                    continue
                seen.add((value.lineno, value.col_offset, code))
                words.setdefault("where", where)
                yield Finding(value.lineno, value.col_offset, code, _message(code, words))


def _handed_at(site, here):
    return "handed to DataLoader workers at %s:%d" % (os.path.relpath(site[0], here), site[1])


def _factories(facts, classes, named):
    """{name of a module-level function among ``named``: the names of this module's
    ``classes`` it returns an instance of}: ``def build_shards(): return Shards()``, read
    from the function's own ``return`` statements only (a cheap look, before any
    analysis)."""
    found = {}
    for name, scope in module_functions(facts, named):
        for value in scope.returns:
            if isinstance(value, ast.Name):
                values = [b.value for b in scope.bindings.get(value.id, ())]
            else:
                values = [value]
            for made in values:
                if isinstance(made, ast.Call) and isinstance(made.func, ast.Name) \
                        and made.func.id in classes:
                    found.setdefault(name, set()).add(made.func.id)
    return found


def check(loaders, facts, method, project=None):
    seen = set()
    for call, scope in loaders:
        fork = method == "fork" or forces_fork(call)
        for dataset in datasets.dataset_classes(call, scope, facts, project):
            found = list(_handles(dataset, fork))
            found.extend(generator + (dataset.facts,)
                         for generator in _generators(dataset, call, scope, facts, fork))
            for code, value, words, home in found:
                at = value
                if home is not facts:  # the line lives in a module beside this one
                    words["where"] = "%s:%d" % (os.path.basename(home.filename), value.lineno)
                    at = value_of(argument(call, "dataset"))
                finding = Finding(at.lineno, at.col_offset, code, _message(code, words))
                if finding not in seen:
                    seen.add(finding)
                    yield finding


def _message(code, words):
    where = words.pop("where", None)
    if where is not None:  # name the other file beside what it holds
        key = "handle" if code == "DLW108" else "factory"
        words[key] = "%s, %s" % (words[key], where)
    return RULES[code].message.format(**words)


# --- DLW108 ----------------------------------------------------------------------------

def _handles(dataset, fork, beside=True):
    """(code, value, message words, facts of the value's module) for each handle the
    dataset keeps, itself or on an object of a class of the project it keeps (of its own
    module only, unless ``beside``: a module's own report names only its own lines)."""
    facts = dataset.facts
    custom_pickle, dropped = _own_pickling(dataset.node, facts)
    for attr, value, init, _cls in datasets.init_assigns(dataset.node, facts):
        init_scope = facts.scopes.get(init)
        if init_scope is None:
            continue
        kind = handle_kind(value, init_scope, facts)
        given = None
        if kind is None:  # DS(sqlite3.connect(p)): a handle given to __init__
            given = _given_for_parameter(dataset, value, init, init_scope, facts)
            if given is None:
                if fork or not (custom_pickle or attr in dropped):
                    yield from _held(value, init_scope, facts, fork, attr,
                                     {id(dataset.node)}, beside)
                continue
            kind = handle_kind(given, dataset.ctor_scope, dataset.ctor_facts)
            if kind is None:
                continue
        what, fork_unsafe = kind
        if fork and not fork_unsafe:
            continue
        if not fork and (custom_pickle or attr in dropped):
            continue
        if given is not None and dataset.ctor_facts is dataset.facts:
            yield "DLW108", given, {"attr": attr, "handle": what}, dataset.ctor_facts
        else:
            yield "DLW108", value, {"attr": attr, "handle": what}, facts


def _own_pickling(classdef, facts):
    """(pickles itself its own way, the attributes its ``__getstate__`` drops): a class
    that drops the handle in ``__getstate__`` is fine when workers are spawned; under
    fork nothing is pickled and only sharing matters."""
    custom_pickle = datasets.defines(classdef, facts, ("__reduce__", "__reduce_ex__"))
    dropped = set()
    getstate = datasets.find_method(classdef, "__getstate__", facts)
    if getstate is not None and not custom_pickle:
        dropped = dropped_from_state(getstate[0])
        custom_pickle = dropped is None
    return custom_pickle, dropped or set()


def _held(value, scope, facts, fork, path, seen, beside, depth=1):
    """DLW108 at ``self.archive = zipfile.ZipFile(data)`` in a class of the project that
    the dataset keeps an object of (``self.reader = ShardReader(data)``), assigned in its
    ``__init__`` or a method ``__init__`` calls on ``self``; two levels of such objects at
    most. The message names the path from the dataset (``self.reader.archive``)."""
    if depth > _HELD_DEPTH:
        return
    for cls, home in _project_classes(value, scope, facts, beside):
        if id(cls) in seen:
            continue
        custom_pickle, dropped = _own_pickling(cls, home)
        for function in _setup_functions(cls, home):
            function_scope = home.scopes.get(function)
            for attr, kept in function_scope.self_assigns if function_scope else ():
                if not fork and (custom_pickle or attr in dropped):
                    continue
                name = "%s.%s" % (path, attr)
                kind = handle_kind(kept, function_scope, home)
                if kind is None:
                    yield from _held(kept, function_scope, home, fork, name,
                                     seen | {id(cls)}, beside, depth + 1)
                elif not fork or kind[1]:
                    yield "DLW108", kept, {"attr": name, "handle": kind[0]}, home


def _project_classes(value, scope, facts, beside=True):
    """(ClassDef, facts of its module) for ``Cls(...)`` where ``Cls`` is a class of this
    module or (with ``beside``) of a module of the project, never a class of an
    installed library."""
    if not isinstance(value, ast.Call):
        return []
    func = value.func
    found = []
    if isinstance(func, ast.Name):
        found = [(b.value, facts) for b in facts.lookup(func.id, scope)
                 if isinstance(b.value, ast.ClassDef)]
    if found or not beside or facts.project is None:
        return found
    qualname = facts.qualname(func, scope)
    if not qualname or "." not in qualname:
        return found
    modname, name = qualname.rsplit(".", 1)
    other = facts.project.module(modname)
    if other is not None:
        found = [(b.value, other) for b in other.module.bindings.get(name, ())
                 if isinstance(b.value, ast.ClassDef) and b.place == MODULE]
    return found


def _setup_functions(cls, facts):
    """The ``__init__`` of a class and the methods it calls on ``self``."""
    init = datasets.find_method(cls, "__init__", facts)
    if init is None:
        return []
    functions = [init[0]]
    for node in ast.walk(init[0]):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and _is_name(node.func.value, "self")):
            method = datasets.find_method(cls, node.func.attr, facts)
            if method is not None and method[0] not in functions:
                functions.append(method[0])
    return functions


def dropped_from_state(getstate):
    """The attributes a ``__getstate__`` of the common shape leaves out or replaces
    (``state = self.__dict__.copy()``; ``state["h5"] = None``, ``del state["h5"]``,
    ``state.pop("h5")``; ``return state``), or None when it builds its state some other
    way, and so decides itself what travels."""
    state, dropped = None, set()
    for node in ast.walk(getstate):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and _copies_dict(node.value)):
            state = node.targets[0].id
    if state is None:
        return None
    for node in ast.walk(getstate):
        if isinstance(node, ast.Return) and not (
                isinstance(node.value, ast.Name) and node.value.id == state):
            return None
        if isinstance(node, ast.Subscript) and _is_name(node.value, state):
            key = node.slice
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return None  # state[name] = ...: which ones cannot be read here
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                dropped.add(key.value)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and _is_name(node.func.value, state)):
            keys = node.args[:1]
            if node.func.attr == "pop" and keys and isinstance(keys[0], ast.Constant):
                dropped.add(keys[0].value)
            elif node.func.attr != "get":
                return None  # state.update(...), state.clear(): read as its own way
    return dropped


def _copies_dict(value):
    """``self.__dict__.copy()``, ``dict(self.__dict__)``, ``copy.copy(self.__dict__)``."""
    own = [n for n in ast.walk(value) if isinstance(n, ast.Attribute)
           and n.attr == "__dict__" and _is_name(n.value, "self")]
    return bool(own) and isinstance(value, ast.Call)


def _is_name(node, name):
    return isinstance(node, ast.Name) and node.id == name


def _given_for_parameter(dataset, value, init, init_scope, facts):
    """The constructor's argument when ``value`` is a parameter of ``__init__`` that
    ``__init__`` does not bind again."""
    if not isinstance(value, ast.Name) or any(
            not isinstance(b.value, ast.arg) for b in facts.lookup(value.id, init_scope)):
        return None
    arguments = init.args
    params = [a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
    if value.id not in params[1:]:
        return None
    return dataset.argument_for(init, value.id)


def handle_kind(value, scope, facts, depth=0):
    """(description, fork-unsafe) when ``value`` creates a handle, else None."""
    if depth > 3:
        return None
    if isinstance(value, ast.GeneratorExp):
        return "a generator", False
    if isinstance(value, ast.Subscript):  # h5py.File(path)["images"]: an h5py Dataset
        inner = handle_kind(value.value, scope, facts, depth + 1)
        if inner is not None and inner[0] == "an h5py.File":
            return "an h5py dataset", True
        return None
    if isinstance(value, ast.Name):
        qualname = facts.qualname(value, scope)
        if qualname is not None and "." not in qualname:
            return "the module '%s'" % qualname, False  # import numpy as np; self.np = np
        return facts.first_bound(
            value.id, scope, lambda bound, at: handle_kind(bound, at, facts, depth + 1))
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
        if func.attr in _SEEDING:  # torch.Generator().manual_seed(0)
            return handle_kind(func.value, scope, facts, depth + 1)
        if func.attr == "open" and facts.qualname(func.value.func, scope) == "pathlib.Path":
            return "an open file", False
    if isinstance(func, ast.Attribute) and facts.qualname(func, scope) is None:
        # env = lmdb.open(p); self.txn = env.begin(): a handle taken from a handle
        inner = handle_kind(func.value, scope, facts, depth + 1)
        if inner is not None:
            return _DERIVED.get((inner[0], func.attr))
        return None
    if isinstance(func, ast.Name) and func.id == "open":
        if not facts.lookup("open", scope) and facts.qualname(func, scope) is None:
            return HANDLES["open"]
        return None
    qualname = facts.qualname(func, scope)
    if qualname in HANDLES:
        return None if qualname in PROGRESS_BARS and _quiet(value, scope, facts) \
            else HANDLES[qualname]
    if isinstance(func, ast.Name):
        for binding in facts.lookup(func.id, scope):
            if (isinstance(binding.value, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and _is_generator_function(binding.value)):
                return "a generator", False
    for returned, returned_scope, home in returned_values(value, scope, facts):
        found = handle_kind(returned, returned_scope, home, depth + 1)  # connect(path)
        if found is not None:
            return found
    return None


def _quiet(call, scope, facts):
    """``tqdm(..., disable=...)``: a disabled bar keeps no file and pickles."""
    return any(kw.arg is None or (kw.arg == "disable" and literal(kw.value, scope, facts)
                                  is not False) for kw in call.keywords)


def _is_generator_function(function):
    stack = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return not isinstance(function, ast.AsyncFunctionDef)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue  # a nested definition's yield is its own
        stack.extend(ast.iter_child_nodes(node))
    return False


# --- DLW111 ----------------------------------------------------------------------------

def _keeps_generator(dataset):
    """A cheap look: does the class's ``__init__`` keep a generator object?"""
    home = dataset.facts
    for _attr, value, init, _cls in datasets.init_assigns(dataset.node, home):
        init_scope = home.scopes.get(init)
        if init_scope is not None and any(
                _generator_factory(value, init_scope, home, fork) is not None
                for fork in (False, True)):
            return True
    return False


def _generators(dataset, call, scope, facts, fork):
    """(code, value, message words) for each generator the workers draw from (``call``:
    the loader, None for one given no ``worker_init_fn``)."""
    home = dataset.facts
    rngs = []
    for attr, value, init, _cls in datasets.init_assigns(dataset.node, home):
        init_scope = home.scopes.get(init)
        if init_scope is None:
            continue
        factory = _generator_factory(value, init_scope, home, fork)
        if factory is not None:
            rngs.append((attr, value, factory))
    if not rngs:
        return
    worker_code = datasets.reachable(datasets.dataset_worker_methods(dataset))
    init_fn = argument(call, "worker_init_fn") if call is not None else None
    init_code = None
    if isinstance(value_of(init_fn), ast.Lambda):
        if not _reseeds_only_global_generators(value_of(init_fn), scope, facts):
            return  # it reads the dataset, or calls what this module cannot read
    elif init_fn is not None and not (isinstance(value_of(init_fn), ast.Constant)
                                      and value_of(init_fn).value is None):
        init_code = datasets.callables(value_of(init_fn), scope, facts)
        if not init_code:
            return  # a worker_init_fn this module cannot read may reseed it
        init_code = datasets.reachable(init_code)
    for attr, value, factory in rngs:
        if not _drawn_from(worker_code, attr):
            continue
        if _reseeded(worker_code, attr):
            continue  # the worker builds or reseeds its own generator
        if init_code is not None and datasets.mentions(init_code, (attr, "dataset")):
            continue
        yield "DLW111", value, {"attr": attr, "factory": factory}


#: what a ``worker_init_fn`` lambda may call and still leave a dataset's own generator
#: as it was: the process-wide generators' seeding
_GLOBAL_SEEDING = frozenset(("numpy.random.seed", "random.seed", "torch.manual_seed"))


def _reseeds_only_global_generators(lambda_, scope, facts):
    """``lambda w: np.random.seed(w)``: every call in it seeds a process-wide generator
    and nothing in it names the dataset."""
    for node in ast.walk(lambda_.body):
        if isinstance(node, ast.Attribute) and node.attr == "dataset":
            return False
        if isinstance(node, ast.Call) and facts.qualname(node.func, scope) not in \
                _GLOBAL_SEEDING:
            return False
    return True


def _generator_factory(value, scope, facts, fork):
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in _SEEDING and isinstance(
            func.value, ast.Call):
        return _generator_factory(func.value, scope, facts, fork)
    qualname = facts.qualname(func, scope)
    if qualname in GENERATORS:
        return GENERATORS[qualname]
    if fork and qualname == "torch.Generator":
        return "torch.Generator"  # under spawn it is DLW108: it does not even start
    return None


def _self_attributes(functions, attr, ctx):
    for code in functions:
        for node in ast.walk(code.node):
            if (isinstance(node, ast.Attribute) and node.attr == attr
                    and isinstance(node.ctx, ctx) and isinstance(node.value, ast.Name)
                    and node.value.id == "self"):
                return True
    return False


def _drawn_from(functions, attr):
    return _self_attributes(functions, attr, ast.Load)


def _reseeded(functions, attr):
    """``self.rng = ...`` or ``self.rng.seed(...)`` somewhere in the worker's code."""
    if _self_attributes(functions, attr, ast.Store):
        return True
    for code in functions:
        for node in ast.walk(code.node):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _RESEED_METHODS):
                owner = node.func.value
                if (isinstance(owner, ast.Attribute) and owner.attr == attr
                        and isinstance(owner.value, ast.Name) and owner.value.id == "self"):
                    return True
    return False
