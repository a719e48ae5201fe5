"""Find the part of an object that a spawned DataLoader worker cannot receive.

``find_unpicklable(obj, root)`` answers with the attribute path of the first
object that stops ``obj`` from reaching a ``spawn`` or ``forkserver`` worker,
what that object is, where it was defined, its catalog code and the real error.
``assert_picklable(obj)`` raises the same as an ``AssertionError``.  The doctor's
pickle probe and the pytest plugin both use this one implementation.

How it decides, without starting a process:

- it pickles with what spawn really uses: ``multiprocessing.reduction.ForkingPickler``
  (which carries torch's tensor and storage reductions), the default protocol, and
  a spawning context in place, as ``Popen._launch`` has while it dumps the worker's
  ``Process`` object; the pickled bytes are discarded as they are written;
- a function or class of ``__main__`` pickles in the parent by name, but the
  worker looks that name up in its own ``__main__``: the main script re-run as
  ``__mp_main__`` (whose ``if __name__ == "__main__":`` block does not run), or
  nothing at all after ``python -m pkg`` or in an interactive session.  Such names
  are checked against the static analysis of the main script;
- a tensor storage is handed to the worker as a file descriptor under torch's
  ``file_descriptor`` sharing strategy; when the storage was a temporary of the
  pickling (``torch.Generator``'s state is one), the descriptor is closed before
  the worker starts and rebuilding the storage fails there.  Every descriptor
  handed over is checked to still be open on the same file after the dump;
- when the whole object fails, its parts are pickled one by one, in the order
  pickle visits them (``__reduce_ex__``/``__getstate__``/``__dict__``, list, tuple
  and dict items, ``functools.partial``, bound methods), and the search goes down
  the first failing part until it reaches an object none of whose parts fail.

Nothing runs beyond what pickling runs itself (``__reduce_ex__``,
``__getstate__``); the search is bounded in depth and in the number of dumps.
Importing this module imports neither torch nor pytest.
"""
import functools
import io
import os
import pickle
import re
import sys
import types
from typing import NamedTuple, Optional

from flake8_dlworker import handles
from flake8_dlworker.assignments import assignment_on_path
from flake8_dlworker.untrusted import is_secret

__all__ = ["Culprit", "UnpicklableError", "find_unpicklable", "assert_picklable",
           "loader_payload", "find_unpicklable_in_loader"]

#: bounds of the search for the culprit inside an object that fails
_MAX_DEPTH = 64
_MAX_DUMPS = 2000
#: up to this many parts of one object are pickled one by one, more by halving
_LINEAR = 8


class Culprit(NamedTuple):
    path: str               # attribute path from the root: "dataset.transform.transforms[2].lambd"
    type_name: str          # qualified type of the culprit: "function", "_io.TextIOWrapper"
    what: str               # "lambda defined at data.py:14", "open file handle (...)"
    code: Optional[str]     # catalog code (the record whose pickle_kind it is) or None
    file: Optional[str]     # where the culprit was defined, when known
    line: Optional[int]
    error: str              # the pickling error for that object, "TypeError: cannot pickle ..."
    #: the class of the object whose attribute holds the culprit ("Shards" for
    #: ``dataset.h5``), and where it was defined: where a handle kept on it was opened
    owner: Optional[str] = None
    owner_file: Optional[str] = None
    owner_line: Optional[int] = None
    #: for a lambda, a column inside it on ``line`` (its body's first), 0-based
    col: Optional[int] = None
    #: where the attribute that keeps the culprit is assigned in the user's class
    #: (``self.fh = open(p)`` for ``dataset.reader.fh``; ``flake8_dlworker.assignments``):
    #: the attribute, the file, the line, the value's column (0-based) and the method
    attribute: Optional[str] = None
    assigned_file: Optional[str] = None
    assigned_line: Optional[int] = None
    assigned_col: Optional[int] = None
    assigned_in: Optional[str] = None
    #: the method's parameter the assignment keeps (``self.db = db``): the caller made it
    assigned_parameter: Optional[str] = None

    def __str__(self):
        text = "%s: %s" % (self.path, self.what)
        return "%s (%s)" % (text, self.code) if self.code else text

    def kept_at(self):
        """``kept as self.fh, assigned at data.py:12 in Reader.__init__()``: the line to
        change, where the user's class keeps the culprit; None where it is not known."""
        if not self.assigned_line:
            return None
        return "kept as self.%s, assigned at %s:%d in %s()" % (
            self.attribute, _shown(self.assigned_file), self.assigned_line, self.assigned_in)


class UnpicklableError(AssertionError):
    """``assert_picklable`` failed; ``culprit`` says what and where."""

    def __init__(self, culprit):
        super().__init__(str(culprit))
        self.culprit = culprit


def assert_picklable(obj, name="obj"):
    """Raise ``UnpicklableError`` naming the first part of ``obj`` a spawned worker cannot get."""
    culprit = find_unpicklable(obj, name)
    if culprit is not None:
        raise UnpicklableError(culprit)


def find_unpicklable(obj, root="obj"):
    """The first part of ``obj`` that cannot reach a spawned worker, or None when it all can.

    A ``DataLoader`` is not pickled itself: what it sends to each worker is
    (``loader_payload``), with paths such as ``loader.dataset.transform``.
    As when spawn starts a worker, torch moves the CPU tensors it pickles into
    shared memory; nothing else of ``obj`` changes.
    """
    return measure(obj, root)[0]


def measure(obj, root="obj", kept=None):
    """(``find_unpicklable``'s answer, the bytes a spawned worker receives for ``obj``, or
    None when it cannot be pickled). The size is that of the one pickling spawn does
    for each worker, counted as it is written, never kept.

    With ``kept`` (a ``KeptReductions``), what the user's own ``__reduce__``,
    ``__reduce_ex__`` and ``__getstate__`` returned during a dump that succeeded is
    kept there, so that the first worker's real pickling can reuse it instead of
    calling them a second time (``KeptReductions.reused_by_next_worker``)."""
    if _is_dataloader(obj):
        return find_unpicklable_in_loader(obj, root), None
    with _SpawnPickling(keep=kept is not None) as pickling:
        failure = pickling.dump(obj)
        if failure is None:
            if kept is not None:
                kept.add(pickling.kept)
            return None, pickling.size
        return _Search(pickling).run(obj, root, failure), None


def loader_payload(loader):
    """What a DataLoader pickles into each worker, as ``(name, object)`` pairs.

    The sampler, batch sampler and ``generator`` stay in the main process; the
    dataset, ``collate_fn`` and ``worker_init_fn`` travel in the worker's ``Process``.
    """
    parts = [("dataset", loader.dataset), ("collate_fn", loader.collate_fn)]
    if loader.worker_init_fn is not None:
        parts.append(("worker_init_fn", loader.worker_init_fn))
    return parts


def _is_dataloader(obj):
    data = sys.modules.get("torch.utils.data")
    return data is not None and isinstance(obj, data.DataLoader)


def find_unpicklable_in_loader(loader, name="loader"):
    """``find_unpicklable`` over ``loader_payload``; paths read ``loader.dataset...``."""
    for part, obj in loader_payload(loader):
        culprit = find_unpicklable(obj, "%s.%s" % (name, part) if name else part)
        if culprit is not None:
            return culprit
    return None


# --- pickling as spawn does ------------------------------------------------------

class _ChildFailure(Exception):
    """The object pickles in the parent but cannot be rebuilt in the worker."""

    def __init__(self, obj, kind, detail):
        super().__init__(detail)
        self.obj = obj
        self.kind = kind        # "main" or "fd"
        self.detail = detail    # for "main": the _MainReach verdict


class _Sink:
    """A write-only file that keeps nothing: the pickled bytes are not needed."""

    __slots__ = ("size",)

    def __init__(self):
        self.size = 0

    def write(self, data):
        self.size += len(data)
        return len(data)


class _ProbePopen:
    """Stands where ``Popen`` stands while spawn dumps the worker's ``Process``.

    Objects that may only travel to a child being spawned (multiprocessing queues,
    locks, connections; torch storages shared by file descriptor) check that a
    spawning ``Popen`` is set, and hand it the descriptors the child must receive,
    as ``popen_spawn_posix.Popen.duplicate_for_child`` does: nothing is duplicated.
    """

    def __init__(self):
        self.fds = []

    def duplicate_for_child(self, fd):
        self.fds.append((fd, _file_id(fd)))  # the file it is open on when handed over
        return fd

    class DupFd:
        def __init__(self, fd):
            self.fd = fd

        def detach(self):
            return self.fd


class _SpawnPickling:
    """A context in which ``dump`` pickles exactly as a spawned worker's start does."""

    def __init__(self, keep=False):
        self.dumps = 0
        self.main = None
        self.pickler = None
        self.size = None   # bytes of the last dump that succeeded
        #: with ``keep``: id -> (object, what its own reduction returned) of the last dump
        self.kept = {} if keep else None

    def __enter__(self):
        from multiprocessing import context, reduction

        if "torch" in sys.modules:
            # torch registers its tensor and storage reducers on ForkingPickler when
            # torch.multiprocessing is imported; without torch no object holds a tensor
            import torch.multiprocessing  # noqa: F401
        self._context = context
        self._previous = context.get_spawning_popen()
        self.main = _MainReach.current()
        probe = self

        class ProbePickler(reduction.ForkingPickler):
            def reducer_override(self, obj):
                probe._check(obj)
                if probe.kept is None:
                    return NotImplemented
                return _keep_reduction(self, obj, probe.kept)

        self.pickler = ProbePickler
        return self

    def __exit__(self, *exc):
        self._context.set_spawning_popen(self._previous)
        return False

    def _check(self, obj):
        # called by the pickler for every function, class and non-builtin object
        if type(obj) is types.FunctionType or isinstance(obj, type):
            if getattr(obj, "__module__", None) == "__main__":
                verdict = self.main.unreachable(obj)
                if verdict is not None:
                    raise _ChildFailure(obj, "main", verdict)

    def dump(self, obj):
        """None when ``obj`` would reach a spawned worker, else the exception that stops it."""
        self.dumps += 1
        popen = _ProbePopen()
        self._context.set_spawning_popen(popen)
        sink = _Sink()
        if self.kept is not None:
            self.kept = {}
        try:
            pickler = self.pickler(sink, None)
            pickler.dump(obj)
            # spawn frees its pickler, and every temporary the pickling made, before
            # the child starts and receives the descriptors
            del pickler
        except Exception as exc:  # any error pickle raises is the answer
            return exc
        finally:
            self._context.set_spawning_popen(self._previous)
        for fd, handed in popen.fds:
            if handed is not None and _file_id(fd) != handed:
                return _ChildFailure(obj, "fd", fd)
        self.size = sink.size
        return None


# --- the user's own reductions, run once for the probe and the first worker -------

def _own_reduction(obj):
    """The type's ``__reduce_ex__``, ``__reduce__`` or ``__getstate__`` when the user's
    code defines one (those may have side effects), else None."""
    cls = type(obj)
    if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType,
                        types.ModuleType, types.MethodType)):
        return None
    module = getattr(cls, "__module__", "") or ""
    if module.split(".")[0] in _LIBRARY_REDUCTIONS:
        return None
    own = any(getattr(cls, name, None) is not getattr(object, name, None)
              for name in ("__reduce_ex__", "__reduce__", "__getstate__"))
    return own or None


#: packages whose reductions hand resources to the child being spawned (descriptors,
#: shared memory): those run again for each worker, as spawn runs them
_LIBRARY_REDUCTIONS = {"torch", "multiprocessing", "_multiprocessing", "builtins", "numpy"}


def _keep_reduction(pickler, obj, kept):
    """What ``pickler`` would get from ``obj``'s own reduction, computed here once and kept
    (iterators of items as lists, so that a second pickling can read them again)."""
    if not _own_reduction(obj) or type(obj) in getattr(pickler, "dispatch_table", {}):
        return NotImplemented
    reduced = obj.__reduce_ex__(pickle.DEFAULT_PROTOCOL)
    if not isinstance(reduced, tuple):
        return reduced
    reduced = tuple(list(part) if i in (3, 4) and part is not None else part
                    for i, part in enumerate(reduced))
    kept[id(obj)] = (obj, reduced)
    return _fresh(reduced)


def _fresh(reduced):
    return tuple(iter(part) if i in (3, 4) and part is not None else part
                 for i, part in enumerate(reduced))


class KeptReductions:
    """What the user's own reductions returned while the probe pickled a loader's parts,
    reused by the real pickling of the loader's first worker: each of them runs once per
    worker, as without the probe."""

    def __init__(self):
        self._kept = {}

    def add(self, kept):
        self._kept.update(kept)

    def reused_by_next_worker(self):
        """A context in which the next ``Process`` that ``multiprocessing.reduction.dump``
        pickles (the first worker the loader starts) reuses the kept reductions."""
        return _ReusedByNextWorker(self._kept)


class _ReusedByNextWorker:
    def __init__(self, kept):
        self.kept = kept

    def __enter__(self):
        from multiprocessing import process, reduction

        self._reduction = reduction
        self._dump = real_dump = reduction.dump
        kept = self.kept

        class ReusingPickler(reduction.ForkingPickler):
            def reducer_override(self, obj):
                found = kept.get(id(obj))
                if found is not None and found[0] is obj:
                    return _fresh(found[1])
                return NotImplemented

        def dump(obj, file, protocol=None):
            if not kept or not isinstance(obj, process.BaseProcess):
                return real_dump(obj, file, protocol)
            reduction.dump = real_dump  # once: the other workers pickle as spawn does
            try:
                ReusingPickler(file, protocol).dump(obj)
            finally:
                kept.clear()

        if kept:
            reduction.dump = dump
        return self

    def __exit__(self, *exc):
        self._reduction.dump = self._dump
        self.kept.clear()
        return False


def _file_id(fd):
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return (st.st_ino, st.st_dev)


# --- __main__ as the worker will see it ------------------------------------------

class _MainReach:
    """Which ``__main__`` names a spawned worker can find (mirrors spawn.get_preparation_data)."""

    GUARD = "guard"
    PACKAGE_MAIN = "package_main"
    INTERACTIVE = "interactive"

    _analyses = {}  # (path, mtime_ns, size) -> {top-level name: set of places}

    def __init__(self, mode, path):
        self.mode = mode  # GUARD (script re-run as __mp_main__), PACKAGE_MAIN, INTERACTIVE
        self.path = path
        self._places = None

    @classmethod
    def current(cls):
        main = sys.modules.get("__main__")
        spec = getattr(main, "__spec__", None)
        name = getattr(spec, "name", None)
        if name:
            path = getattr(main, "__file__", None) or getattr(spec, "origin", None)
            if name == "__main__" or name.endswith(".__main__"):
                # spawn._fixup_main_from_name skips these: the worker's __main__ is bare
                return cls(cls.PACKAGE_MAIN, path)
            return cls(cls.GUARD, path)
        path = getattr(main, "__file__", None)
        if not path:
            return cls(cls.INTERACTIVE, None)
        if os.path.splitext(os.path.basename(path))[0] == "ipython":
            return cls(cls.INTERACTIVE, path)  # spawn skips IPython's launcher
        return cls(cls.GUARD, path)

    def unreachable(self, obj):
        """None when the worker finds ``obj`` by name, else why it cannot."""
        qualname = getattr(obj, "__qualname__", "") or ""
        if "<" in qualname:
            return None  # a lambda or local object: pickling fails in the parent already
        if self.mode != self.GUARD:
            return self.mode
        places = self._main_places().get(qualname.split(".")[0])
        if not places:
            return None  # not bound where the analysis can see: do not guess
        from flake8_dlworker.analysis.module import GUARD, MAIN_FILE, MODULE

        if places & {MODULE, MAIN_FILE}:
            return None
        if GUARD in places:
            return self.GUARD
        return None

    def _main_places(self):
        if self._places is None:
            self._places = self._analyse(self.path) if self.path else {}
        return self._places

    @classmethod
    def _analyse(cls, path):
        try:
            st = os.stat(path)
        except OSError:
            return {}
        key = (path, st.st_mtime_ns, st.st_size)
        found = cls._analyses.get(key)
        if found is None:
            found = cls._analyses[key] = _top_level_places(path)
        return found

    def definition_line(self, obj):
        """The line of a ``__main__`` class's definition in the main script."""
        name = obj.__qualname__
        if not self.path or "." in name or "<" in name:
            return None
        facts = _main_facts(self.path)
        if facts is None:
            return None
        for binding in facts.module.bindings.get(name, ()):
            node = binding.value
            if type(node).__name__ == "ClassDef" and node.name == name:
                return node.lineno
        return None


def _main_facts(path):
    import ast

    from flake8_dlworker.analysis.module import analyze_module

    try:
        with open(path, "rb") as f:
            source = f.read()
        return analyze_module(ast.parse(source, path), path)
    except (OSError, SyntaxError, ValueError):
        return None


def _top_level_places(path):
    facts = _main_facts(path)
    if facts is None:
        return {}
    return {name: {b.place for b in bindings}
            for name, bindings in facts.module.bindings.items()}


def _child_error(obj, mode, main_path):
    """The error the worker raises when it looks ``obj`` up in its ``__main__``."""
    name = obj.__qualname__
    if sys.version_info >= (3, 14):
        module = "__mp_main__" if mode == _MainReach.GUARD else "__main__"
        return "AttributeError: module '%s' has no attribute '%s'" % (module, name)
    if mode == _MainReach.GUARD:
        where = "<module '__mp_main__' from '%s'>" % os.path.abspath(main_path)
    elif sys.version_info >= (3, 12):
        where = "<module '__main__' (<class '_frozen_importlib.BuiltinImporter'>)>"
    else:
        where = "<module '__main__' (built-in)>"
    return "AttributeError: Can't get attribute '%s' on %s" % (name, where)


#: what the worker raises when a storage's descriptor was closed before it started
_DEAD_FD_ERROR = ("RuntimeError: unable to resize file <filename not specified> to the "
                  "right size: Invalid argument (22)")


# --- the search -------------------------------------------------------------------

_ATOMIC = frozenset((type(None), bool, int, float, complex, str, bytes, range,
                     type(Ellipsis), type(NotImplemented)))


class _Search:
    """Goes down the first failing part of a failing object until no part fails."""

    def __init__(self, pickling):
        self.pickling = pickling
        self.failures = {}  # id -> exception or None
        self.keep = []      # everything looked at stays alive: ids stay unique
        self.onpath = set()
        #: (object, attribute name) for each object with an attribute on the path,
        #: innermost last
        self.owners = []

    def culprit(self, obj, path, failure, cls=None):
        found = _culprit(obj, path, failure, self.pickling, cls)
        if cls is None and getattr(obj, "__name__", None) == "<lambda>":
            found = found._replace(col=_body_column(getattr(obj, "__code__", None)))
        owner = self.owners[-1][0] if self.owners and cls is None else None
        if owner is None:
            return found
        file, line = _class_location(type(owner), self.pickling)
        found = found._replace(owner=type(owner).__qualname__, owner_file=file,
                               owner_line=line)
        try:
            assigned = assignment_on_path(self.owners)
        except Exception:  # an odd class's source must not hide the path to the culprit
            assigned = None
        if assigned is None:
            return found
        return found._replace(attribute=assigned.attribute, assigned_file=assigned.file,
                              assigned_line=assigned.line, assigned_col=assigned.col,
                              assigned_in=assigned.where,
                              assigned_parameter=assigned.parameter)

    def fails(self, obj):
        key = id(obj)
        if key not in self.failures:
            self.keep.append(obj)
            if self.pickling.dumps >= _MAX_DUMPS:
                return None
            self.failures[key] = self.pickling.dump(obj)
        return self.failures[key]

    def run(self, obj, root, failure):
        self.keep.append(obj)
        self.failures[id(obj)] = failure
        found = self.search(obj, root, failure, 0)
        if found is None:  # every failing part led back up a cycle: the root it is
            found = self.culprit(obj, root, failure)
        return found

    def search(self, obj, path, failure, depth):
        if isinstance(failure, _ChildFailure) and failure.kind == "main" and failure.obj is obj:
            return self.culprit(obj, path, failure)
        if depth >= _MAX_DEPTH or self.pickling.dumps >= _MAX_DUMPS:
            return self.culprit(obj, path, failure)
        if _handle_kind(obj) is not None:  # a zip archive, not the file inside it
            return self.culprit(obj, path, failure)
        try:
            parts = _parts(obj)
        except Exception as exc:  # __reduce_ex__ / __getstate__ refuses: it is this object
            return self.culprit(obj, path, _as_failure(failure, exc))
        if parts is None:  # pickled by name: a function, a class, a module-level object
            return self.culprit(obj, path, failure)
        self.onpath.add(id(obj))
        looped = False
        parts = [p for p in parts if type(p[2]) not in _ATOMIC]
        start = 0
        try:
            while True:
                index = self.first_failing(parts, start)
                if index is None:
                    break
                start = index + 1
                kind, label, part = parts[index]
                part_failure = self.fails(part)
                if part_failure is None:
                    continue
                if kind == "class":
                    # the object's class cannot travel: the object is the culprit
                    return self.culprit(obj, path, failure, cls=part)
                if id(part) in self.onpath:
                    looped = True
                    continue
                holder = kind == "attr" and not isinstance(obj, functools.partial)
                if holder:
                    self.owners.append((obj, label[1:]))
                try:
                    found = self.search(part, path + label, part_failure, depth + 1)
                finally:
                    if holder:
                        self.owners.pop()
                if found is not None:
                    return found
                looped = True  # that part fails only through an object above it
        finally:
            self.onpath.discard(id(obj))
        if looped:
            return None
        return self.culprit(obj, path, failure)

    def first_failing(self, parts, start):
        """The index of the first part from ``start`` on that fails, or None.

        Few parts are pickled one by one; many (a list of a million samples) by
        halving the failing run of parts, first half first, which costs about two
        dumps of the whole run instead of one dump per part.
        """
        count = len(parts) - start
        if count <= 0:
            return None
        if count <= _LINEAR:
            for index in range(start, len(parts)):
                if self.fails(parts[index][2]) is not None:
                    return index
            return None
        objects = [p[2] for p in parts]
        if self.pickling.dump(objects[start:]) is None:
            return None
        low, high = start, len(parts)  # objects[low:high] fails, none before low does
        while high - low > 1:
            middle = (low + high) // 2
            if self.pickling.dump(objects[low:middle]) is None:
                low = middle
            else:
                high = middle
        return low


def _body_column(code):
    """The first column of a lambda's body on its first line (several lambdas may share
    the line), or None where the code object has no positions."""
    try:
        columns = [col for line, _end, col, endcol in code.co_positions()
                   if line == code.co_firstlineno and col is not None and endcol
                   and endcol > col]  # not the function's zero-width prologue
    except (AttributeError, TypeError):
        return None
    return min(columns) if columns else None


def _as_failure(failure, exc):
    return failure if isinstance(failure, _ChildFailure) else exc


def _parts(obj):
    """``(kind, path label, object)`` for what pickle saves of ``obj``, in pickle's order.

    None when pickle saves ``obj`` by name (no parts).  Raises what ``__reduce_ex__``
    raises for objects that refuse to be pickled.
    """
    t = type(obj)
    if t is dict:
        return _dict_items(obj.items())
    if t in (list, tuple):
        return [("item", "[%d]" % i, v) for i, v in enumerate(obj)]
    if t in (set, frozenset):
        return [("item", "<item %d>" % i, v) for i, v in enumerate(obj)]
    if t is types.FunctionType or isinstance(obj, (type, types.ModuleType)):
        if isinstance(obj, types.ModuleType):
            obj.__reduce_ex__(4)  # raises "cannot pickle 'module' object"
        return None
    if isinstance(obj, functools.partial):
        parts = [("part", ".func", obj.func)]
        parts += [("part", ".args[%d]" % i, v) for i, v in enumerate(obj.args)]
        parts += [("part", ".keywords%s" % _key_label(k, i), v)
                  for i, (k, v) in enumerate(obj.keywords.items())]
        parts += _state_parts(getattr(obj, "__dict__", None) or {})
        return parts
    if isinstance(obj, types.MethodType):
        return [("part", ".__self__", obj.__self__), ("part", ".__func__", obj.__func__)]
    from multiprocessing.reduction import ForkingPickler

    import copyreg

    reducer = ForkingPickler._extra_reducers.get(t) or copyreg.dispatch_table.get(t)
    rv = reducer(obj) if reducer is not None else obj.__reduce_ex__(pickle.DEFAULT_PROTOCOL)
    if isinstance(rv, str):
        return None
    return _reduce_parts(obj, rv)


def _reduce_parts(obj, rv):
    import copyreg

    rv = tuple(rv) + (None,) * (6 - len(rv))
    func, args, state, listitems, dictitems = rv[:5]
    parts = []
    args = tuple(args or ())
    if func is getattr and len(args) == 2:  # a builtin bound method: (getattr, (self, name))
        return [("part", ".__self__", args[0])]
    if func in (copyreg.__newobj__, copyreg.__newobj_ex__) and args:
        parts.append(("class", "", args[0]))
        rest = args[1:]
        if func is copyreg.__newobj_ex__ and len(rest) == 2:
            rest = tuple(rest[0]) + tuple((rest[1] or {}).values())
    elif func is copyreg._reconstructor and args:
        parts.append(("class", "", args[0]))
        rest = args[2:]
    else:
        parts.append(("part", "<reduce>", func))
        rest = args
    if isinstance(obj, tuple):  # a namedtuple: its items are the arguments
        parts += [("item", "[%d]" % i, v) for i, v in enumerate(rest)]
    else:
        parts += [("part", "<arg %d>" % i, v) for i, v in enumerate(rest)]
    if state is not None:
        parts += _state_parts(state, obj)
    if listitems is not None:
        parts += [("item", "[%d]" % i, v) for i, v in enumerate(listitems)]
    if dictitems is not None:
        parts += _dict_items(dictitems)
    return parts


def _state_parts(state, obj=None):
    if isinstance(state, tuple) and len(state) == 2 and all(
            s is None or isinstance(s, dict) for s in state):
        parts = []
        for s in state:  # (__dict__, __slots__ values)
            if s:
                parts += _attr_items(s, obj)
        return parts
    if type(state) is dict:
        return _attr_items(state, obj)
    return [("part", ".__getstate__()", state)]


#: torch.nn.Module keeps its children here; ``model.fc`` reads better than ``._modules['fc']``
_MODULE_DICTS = ("_modules", "_parameters", "_buffers")


def _attr_items(state, obj):
    parts = []
    for key, value in state.items():
        if (key in _MODULE_DICTS and isinstance(value, dict) and obj is not None
                and _is_nn_module(obj)):
            parts += [_attr_part(k, v, len(parts) + i, key) for i, (k, v) in
                      enumerate(value.items())]
        else:
            parts.append(_attr_part(key, value, len(parts)))
    return parts


def attribute_label(name, position):
    """``.name``, as a report may show the attribute ``name`` (the ``position``-th of
    its object): see :func:`_attr_part`."""
    return _attr_part(name, None, position)[1]


def _attr_part(name, value, position, holder="__dict__"):
    """``(kind, label, value)`` for an attribute: ``.name`` (kind ``attr``, an attribute
    of the object that holds the path's next step), a dunder's ``.__name__``, or the
    holding dict's key (``.__dict__[...]``) for a name that is no identifier or that the
    report must not show (:func:`flake8_dlworker.untrusted.is_secret`)."""
    if not (isinstance(name, str) and name.isidentifier()) or is_secret(name):
        return "part", ".%s%s" % (holder, _key_label(name, position)), value
    return ("part" if name.startswith("__") else "attr"), "." + name, value


def _is_nn_module(obj):
    nn = sys.modules.get("torch.nn")
    return nn is not None and isinstance(obj, nn.Module)


def _dict_items(items):
    parts = []
    for i, (key, value) in enumerate(items):
        if type(key) not in _ATOMIC:
            parts.append(("item", "<key %d>" % i, key))
        parts.append(("item", _key_label(key, i), value))
    return parts


#: the shape of a word a program chose as a key: shown as it is
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_ .:/-]{0,39}")


def _key_label(key, position):
    """``[key]`` for a dict key, unless the key may be a secret (a token used as a key,
    :func:`flake8_dlworker.untrusted.is_secret`): then only its type and position, so
    that a report never reveals it."""
    if type(key) in _ATOMIC and not isinstance(key, (str, bytes)) and not is_secret(repr(key)):
        return "[%r]" % (key,)
    if isinstance(key, str) and _PLAIN_KEY.fullmatch(key) and not is_secret(key):
        return "[%r]" % (key,)
    return "[<%s key #%d>]" % (type(key).__name__, position)


# --- naming the culprit -----------------------------------------------------------

def _qualified(t):
    module = getattr(t, "__module__", None)
    name = getattr(t, "__qualname__", None) or getattr(t, "__name__", "?")
    if module in (None, "builtins"):
        return name
    return "%s.%s" % (module, name)


def _error_text(exc):
    return "%s: %s" % (_qualified(type(exc)), exc)


def _shown(path):
    """A file name as the user knows it: relative to the working directory when under it."""
    if not path:
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if rel.startswith(os.pardir) else rel


def _where(file, line):
    if not file:
        return ""
    return " defined at %s:%s" % (_shown(file), line) if line else " defined in %s" % _shown(file)


def _code_location(code):
    return code.co_filename, code.co_firstlineno


def _class_location(cls, pickling):
    file = None
    try:
        file = sys.modules[cls.__module__].__file__
    except (KeyError, AttributeError):
        pass
    line = getattr(cls, "__firstlineno__", None)  # Python 3.13+
    if (line is None and cls.__module__ == "__main__" and pickling is not None
            and pickling.main is not None):
        line = pickling.main.definition_line(cls)
    if line is None and file:
        try:
            import inspect

            line = inspect.findsource(cls)[1] + 1
        except Exception:  # no source at hand: the file alone
            line = None
    return file, line


def class_site(cls):
    """``"Name defined at file.py:12"`` for a class, as the culprits say it."""
    file, line = _class_location(cls, None)
    return "%s%s" % (cls.__qualname__, _where(file, line))


def _culprit(obj, path, failure, pickling, cls=None):
    """Describe ``obj`` (or, with ``cls``, an instance of a class that cannot travel)."""
    try:
        if cls is not None:
            what, code, file, line = _describe_definition(cls, failure, pickling)
            what = "instance of " + what
        else:
            what, code, file, line = _describe(obj, failure, pickling)
    except Exception:  # an odd object's attributes must not hide the path to it
        what, code, file, line = "object of type %s" % _qualified(type(obj)), None, None, None
    return Culprit(path, _qualified(type(obj)), what, code, file, line,
                   _failure_text(failure, pickling))


def _failure_text(failure, pickling):
    if isinstance(failure, _ChildFailure):
        if failure.kind == "main":
            return _child_error(failure.obj, failure.detail, pickling.main.path)
        return _DEAD_FD_ERROR
    return _error_text(failure)


def _describe_definition(obj, failure, pickling):
    """(what, code, file, line) for a function or class that cannot travel."""
    if isinstance(obj, type):
        kind = "class"
        file, line = _class_location(obj, pickling)
    else:
        kind = "function"
        code_obj = getattr(obj, "__code__", None)
        file, line = _code_location(code_obj) if code_obj is not None else (None, None)
    qualname = getattr(obj, "__qualname__", repr(obj))
    if isinstance(failure, _ChildFailure) and failure.kind == "main":
        mode = failure.detail
        if mode == _MainReach.GUARD:
            where = " only inside the __main__ guard" if not file else (
                "%s, only inside the __main__ guard" % _where(file, line))
        elif mode == _MainReach.PACKAGE_MAIN:
            where = "%s, in a package's __main__.py run with -m" % _where(file, line)
        else:
            where = (" in an interactive session (a notebook cell, IPython or the REPL), "
                     "whose __main__ workers cannot import: move it into a module")
        return "%s '%s'%s" % (kind, qualname, where), _code("main"), file, line
    if getattr(obj, "__name__", None) == "<lambda>":
        return "lambda" + _where(file, line), _code("lambda"), file, line
    if "<locals>" in qualname:
        return "%s '%s'%s" % (kind, qualname, _where(file, line)), _code("local"), file, line
    module = getattr(obj, "__module__", None)
    name = "%s.%s" % (module, qualname) if module else qualname
    return "%s '%s'%s" % (kind, name, _where(file, line)), None, file, line


def _code(kind):
    """The catalog code of what a worker cannot receive: its record's ``pickle_kind``."""
    from flake8_dlworker import catalog

    return catalog.code_for("pickle_kind", kind)


def _describe(obj, failure, pickling):
    """(what, code, file, line) for the object that stops the pickling."""
    if type(obj) is types.FunctionType or isinstance(obj, type):
        return _describe_definition(obj, failure, pickling)
    type_name = _qualified(type(obj))
    if isinstance(obj, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
        code = getattr(obj, "gi_code", None) or getattr(obj, "cr_code", None) or getattr(
            obj, "ag_code", None)
        file, line = _code_location(code) if code is not None else (None, None)
        kind = type(obj).__name__
        return ("%s object from '%s'%s" % (kind, obj.__qualname__, _where(file, line)),
                _code("handle"), file, line)
    if isinstance(obj, types.ModuleType):
        file = getattr(obj, "__file__", None)
        return "module object '%s'" % obj.__name__, _code("handle"), file, None
    handle = _handle_kind(obj)
    if handle is not None:
        return "%s (%s)" % (handle, type_name), _code("handle"), None, None
    if isinstance(failure, _ChildFailure) and failure.kind == "fd":
        return ("object of type %s whose pickled state is a temporary tensor shared by "
                "file descriptor, closed before the worker can open it" % type_name,
                None, None, None)
    if isinstance(obj, (types.BuiltinMethodType, types.MethodType)):
        return "method %r" % obj, None, None, None
    return "object of type %s" % type_name, None, None, None


def _handle_kind(obj):
    """A short name for handle-like objects (an open resource), or None."""
    import threading

    if isinstance(obj, io.IOBase):
        name = getattr(obj, "name", None)
        shown = " on %r" % _shown(name) if isinstance(name, str) else ""
        return "open file handle" + shown
    if isinstance(obj, (type(threading.Lock()), type(threading.RLock()))):
        return "lock"
    if isinstance(obj, threading.local):
        return "thread-local storage"
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Generator):
        return "torch.Generator"
    for cls, label in handles.types_in():  # the record's known handles
        if isinstance(obj, cls):
            filename = getattr(obj, "filename", None) or getattr(obj, "name", None)
            shown = " on %r" % _shown(filename) if isinstance(filename, str) else ""
            return label + shown
    module = type(obj).__module__ or ""
    if module.split(".")[0] == "h5py":
        return "h5py object"
    if module.split(".")[0] == "lmdb":
        return "lmdb handle"
    return None


# --- what a worker sees of the dataset's random generators -------------------------

class WorkerRandomProbe:
    """A ``worker_init_fn`` that runs the loader's own, then reports the dataset's generators.

    The pytest plugin sets it on its copy of a loader.  In each worker, after the
    user's ``worker_init_fn`` (which may reseed them), it finds the random
    generators kept on the dataset (``random.Random``, numpy ``Generator`` and
    ``RandomState``, ``torch.Generator``) and draws one number from a copy of each,
    leaving the generator itself untouched; ``queue`` carries
    ``(worker_id, pid, [(path, type, number)])`` back to the main process.  With
    ``stack_path``, SIGUSR1 makes the worker append its stack there (faulthandler).
    """

    def __init__(self, init_fn, queue, stack_path=None):
        self.init_fn = init_fn
        self.queue = queue
        self.stack_path = stack_path

    def __call__(self, worker_id):
        if self.init_fn is not None:
            self.init_fn(worker_id)
        if self.stack_path:  # a stuck worker's stack, on request (the plugin asks on timeout)
            try:
                from flake8_dlworker import platforms

                stacks = open(self.stack_path, "a")  # faulthandler keeps it open
                if not platforms.answer_test_stack_requests(stacks):
                    stacks.close()  # no SIGUSR1 here (Windows)
            except (ValueError, OSError, RuntimeError):
                pass
        try:
            from torch.utils.data import get_worker_info

            info = get_worker_info()
            draws = [(path, _qualified(type(rng)), _draw(rng))
                     for path, rng in random_generators(info.dataset, "dataset")]
        except Exception as exc:  # the probe must never break the user's worker
            draws = [("<probe>", "error", repr(exc))]
        self.queue.put((worker_id, os.getpid(), draws))


def random_generators(root, name, max_depth=4, max_objects=5000):
    """``(path, generator)`` for the random generators kept in ``root``'s attributes."""
    import random

    kinds = [random.Random]
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        kinds += [numpy.random.Generator, numpy.random.RandomState]
    torch = sys.modules.get("torch")
    if torch is not None:
        kinds.append(torch.Generator)
    kinds = tuple(kinds)
    opaque = (type, types.ModuleType, types.FunctionType, types.MethodType, io.IOBase)
    found, seen = [], set()
    queue = [(root, name, 0)]
    while queue and len(seen) < max_objects:
        obj, path, depth = queue.pop(0)
        if id(obj) in seen or type(obj) in _ATOMIC or isinstance(obj, opaque):
            continue
        seen.add(id(obj))
        if isinstance(obj, kinds):
            if not isinstance(obj, random.SystemRandom):  # no state: nothing to copy
                found.append((path, obj))
            continue
        if depth >= max_depth:
            continue
        if type(obj) is dict:
            items = [(path + _key_label(k, i), v)
                     for i, (k, v) in enumerate(list(obj.items())[:1000])]
        elif type(obj) in (list, tuple):
            items = [("%s[%d]" % (path, i), v) for i, v in enumerate(obj[:1000])]
        else:
            try:
                attrs = object.__getattribute__(obj, "__dict__")
            except AttributeError:
                continue
            if not isinstance(attrs, dict):
                continue
            items = [(path + attribute_label(k, i), v)
                     for i, (k, v) in enumerate(attrs.items()) if isinstance(k, str)]
        queue.extend((v, p, depth + 1) for p, v in items)
    return found


def _draw(rng):
    """One number from a copy of ``rng``: what the generator itself will draw next."""
    import copy

    torch = sys.modules.get("torch")
    if torch is not None and isinstance(rng, torch.Generator):
        twin = torch.Generator(device=rng.device)
        twin.set_state(rng.get_state())
        return torch.rand(1, generator=twin, device=rng.device).item()
    return float(copy.deepcopy(rng).random())
