"""The known handles: the calls that make an object a worker cannot receive.

The list is data in the record of the cause whose ``pickle_kind`` is ``handle``
(its ``handles`` field, one entry a line)::

    sqlite3.connect: a sqlite3 connection; fork-unsafe; makes sqlite3.Connection

the qualified name of the call, how a message names what it makes, then its flags:
``fork-unsafe`` (sharing it across fork is unsafe too), ``quiet when disable=`` (a
progress bar made with ``disable=`` keeps no file and pickles), ``pickles`` (it pickles,
and the worker fails to rebuild it), ``makes MODULE.CLASS`` (the class of what a
function returns). The static rule reads the calls, the pickle probe the classes
(:func:`types_in`), the tests prove each entry unpicklable where its module is installed.
"""
import sys
from typing import NamedTuple, Optional

from flake8_dlworker import catalog

FLAGS = ("fork-unsafe", "quiet when disable=", "pickles")


class Handle(NamedTuple):
    qualname: str
    #: how a message names it ("a sqlite3 connection")
    words: str
    fork_unsafe: bool = False
    #: a progress bar that keeps no file when made with ``disable=``
    quiet_when_disabled: bool = False
    #: it pickles; the worker fails to rebuild it
    pickles: bool = False
    #: the class of what the call returns, where the call is a function
    makes: Optional[str] = None

    @property
    def label(self):
        """The words without their article: how the pickle probe names the object."""
        first, _, rest = self.words.partition(" ")
        return rest if first in ("a", "an") and rest else self.words


def parse(entry):
    """One entry of the record's ``handles`` field as a :class:`Handle`."""
    head, *flags = [part.strip() for part in entry.split(";")]
    qualname, sep, words = head.partition(":")
    if not sep or not qualname.strip() or not words.strip():
        raise catalog.CatalogError("handles: %r is not 'QUALNAME: WORDS[; FLAG]...'" % entry)
    makes = None
    for flag in flags:
        if flag.startswith("makes "):
            makes = flag[len("makes "):].strip()
        elif flag not in FLAGS:
            raise catalog.CatalogError("handles: unknown flag %r in %r" % (flag, entry))
    return Handle(qualname.strip(), words.strip(), "fork-unsafe" in flags,
                  "quiet when disable=" in flags, "pickles" in flags, makes)


def _load():
    record = catalog.RULES[catalog.code_for("pickle_kind", "handle")]
    return {handle.qualname: handle for handle in map(parse, record.texts("handles"))}


#: qualified name of the call -> :class:`Handle`, in the record's order
HANDLES = _load()


_types = (None, None)  # (how many modules were loaded, the classes found then)


def types_in():
    """``(class, label)`` of each known handle whose module is loaded: the call itself
    where it is a class, else the class it makes. Only loaded modules are read (an object
    of a module nobody imported cannot exist); the answer is kept until more load."""
    global _types
    modules = sys.modules
    if _types[0] == len(modules):
        return _types[1]
    found = []
    for handle in HANDLES.values():
        for name in (handle.makes, handle.qualname):
            if name is None:
                continue
            cls = _loaded(name, modules)
            if isinstance(cls, type):
                found.append((cls, handle.label))
                break
    _types = (len(modules), found)
    return found


def _loaded(qualname, modules):
    module, _, attr = qualname.rpartition(".")
    while module:
        if module in modules:
            obj = modules[module]
            for part in attr.split("."):
                obj = getattr(obj, part, None)
            return obj
        module, _, head = module.rpartition(".")
        attr = head + "." + attr
    return None
