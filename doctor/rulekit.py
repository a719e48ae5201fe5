"""What every diagnosis rule reads and returns: the shared layer of the runtime rules.

A rule (a cause's ``diagnosis.py``, or a rule of several causes in :mod:`doctor.diagnose`)
reads only the evidence record (:mod:`doctor.evidence`) and returns a :class:`Diagnosis`
or None; ``@rule(order=N)`` places it among every rule, the root cause of a failure
before the symptoms it explains. These helpers find the error texts in the evidence and
point a diagnosis at the user's line; they name no cause.
"""
import os
import re
import signal as _signal
import sys
from dataclasses import dataclass, field
from typing import List, Optional

from flake8_dlworker.catalog import CAUSES, RULES
from flake8_dlworker.notebook import cell_place


def rule(order):
    """Marks a diagnosis rule and its place among every rule (lower runs first)."""
    def mark(function):
        function.order = order
        return function
    return mark


_LIBRARY = re.compile(r"([\\/](site|dist)-packages[\\/]|[\\/]lib[\\/]python\d|"
                      r"[\\/]Lib[\\/]|\\lib\\|^<(?!cell In|ipython-input)|"
                      r"^~[\\/].*[\\/]lib[\\/])")


def _stdlib_names():
    """The standard library's top-level names: Python 3.10+ lists them; on 3.9 they are
    the built-in modules and what the running Python's stdlib folder holds."""
    names = getattr(sys, "stdlib_module_names", None)
    if names:
        return frozenset(names)
    import pkgutil
    import sysconfig

    found = {m.name for m in pkgutil.iter_modules([sysconfig.get_paths()["stdlib"]])}
    return frozenset(sys.builtin_module_names) | found


#: py-spy prints paths relative to sys.path: a first part that names the standard library
#: or a well-known package is a library's frame ("threading.py", "torch/utils/data/...")
_TOP_LIBRARIES = (_stdlib_names() - {"test", "code", "this"}) | {
    "torch", "torchvision", "torchaudio", "numpy", "PIL", "cv2", "h5py", "lmdb", "scipy",
    "pandas", "sklearn", "transformers", "tokenizers", "accelerate", "diffusers",
    "lightning", "pytorch_lightning", "lightning_fabric", "timm", "mmcv", "mmdet", "mmengine",
    "ultralytics", "albumentations", "tqdm", "webdataset", "fsspec", "pyarrow", "deepspeed",
    "_pytest", "pytest", "pluggy", "IPython", "ipykernel", "tornado", "zmq", "six",
    "threading", "queue", "multiprocessing", "concurrent", "selectors", "socket", "logging"}


#: the doctor's own frames (its agent runs inside the target) are never the user's; the
#: catalog's example programs are scripts like any user's
_OWN = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
             for m in (__import__("doctor"), __import__("flake8_dlworker")))


_EXAMPLES = os.path.abspath(CAUSES) + os.sep


def is_library(path):
    if _LIBRARY.search(path):
        return True
    full = os.path.abspath(path)
    if full.startswith(_OWN) and not full.startswith(_EXAMPLES):
        return True
    if path.startswith(("/", "\\", "<")) or re.match(r"[A-Za-z]:", path):
        return False
    head = re.split(r"[\\/]", path, 1)[0]
    return (head[:-3] if head.endswith(".py") else head) in _TOP_LIBRARIES


@dataclass
class Diagnosis:
    code: str
    confidence: str                  # certain | likely | possible
    evidence: List[str] = field(default_factory=list)
    path: Optional[str] = None
    line: Optional[int] = None
    patch: Optional[str] = None
    verified: Optional[bool] = None
    detail: str = ""                 # one line naming this case, shown after the title
    #: a notebook's cell (0-based index, markdown cells counted); ``line`` is in that cell
    cell: Optional[int] = None
    #: the rank of a distributed job where the cause happened, and its node where there
    #: were several: the node's group rank in a run (doctor.ranks), the log's name in
    #: ``explain node0.log node1.log`` (doctor.distributed); None otherwise
    rank: Optional[int] = None
    node: Optional[object] = None
    #: in one node's run of a job of several: its ranks only showed what follows a
    #: failure, and the root cause is another node's (doctor.ranks); not in the JSON,
    #: whose ``evidence`` says it
    elsewhere: bool = False

    @property
    def rule(self):
        return RULES[self.code]

    def to_json(self):
        place = {"path": self.path, "line": self.line}
        if self.cell is not None:  # SPEC: "cell" beside path and line, for notebooks only
            place = {"path": self.path, "cell": self.cell, "line": self.line}
        if self.rank is not None:  # SPEC: "rank" (and "node") in a distributed job only
            place["rank"] = self.rank
            if self.node is not None:
                place["node"] = self.node
        return {
            "code": self.code, "title": self.rule.title, "confidence": self.confidence,
            "explanation": self.rule.explanation, "evidence": self.evidence,
            **place, "patch": self.patch, "verified": self.verified,
        }


def texts(ev):
    """(exception, 'Type: message') for every exception printed, and the notable lines."""
    for exc in ev.all_exceptions():
        yield exc, "%s: %s" % (exc.type, exc.message)
    for line in ev.lines:
        yield None, line


def find(ev, *patterns):
    """The first exception or line matching one of the patterns: (exc, text, match)."""
    regexes = [re.compile(p) for p in patterns]
    for exc, text in texts(ev):
        for regex in regexes:
            match = regex.search(text)
            if match:
                return exc, text, match
    return None


def first_line(text):
    return text.strip().split("\n", 1)[0].strip()


def finding_text(finding):
    """A static finding as evidence: ``train.py:14: CODE ...``, in a notebook
    ``train.ipynb:cell 3:2: CODE ...`` (the cell counted from 1, as ruff prints it)."""
    line = finding["line"]
    if finding.get("cell") is not None:
        line = cell_place(finding["cell"], line)
    return "%s:%s: %s %s" % (finding["path"], line, finding["code"], finding["text"])


def static_finding(ev, code):
    for finding in ev.static:
        if finding["code"] == code:
            return finding
    return None


def user_frame(exc):
    """The innermost frame of the user's own code in an exception (not a library's)."""
    for frame in reversed(exc.frames if exc else []):
        if not is_library(frame.path):
            return frame
    return None


def locate(diag, ev, exc=None):
    """path/line: the static finding of this code, else the user's frame."""
    finding = static_finding(ev, diag.code)
    if finding is not None:
        diag.path, diag.line, diag.cell = finding["path"], finding["line"], finding.get("cell")
        diag.evidence.append(finding_text(finding))
        return diag
    for candidate in ([exc.original, exc] if exc is not None else []):
        frame = user_frame(candidate)
        if frame is not None:
            diag.path, diag.line = frame.path, frame.line
            return diag
    # an error raised inside the library (a worker's signal, the fd limit): the user's
    # line is in a later exception of the same chain, where the loop was iterating
    for last in ev.exceptions if exc is not None else ():
        if any(item is exc for item in last.chain()):
            frame = user_frame(last)
            if frame is not None:
                diag.path, diag.line = frame.path, frame.line
            break
    return diag


def signame(number):
    try:
        return _signal.Signals(number).name
    except ValueError:
        return "signal %d" % number


def worker_with_signal(ev, *names):
    for worker in ev.worker_signals():
        if signame(worker.signal) in names:
            return worker
    return None


def worker_words(worker):
    who = "worker %d" % worker.worker_id if worker.worker_id is not None else "a worker"
    if getattr(worker, "rank", None) is not None:
        who += " of rank %d" % worker.rank
    return "%s (pid %d)" % (who, worker.pid)


def loader_of(ev, worker):
    """The DataLoader record whose workers include ``worker``: where to lower them."""
    for loader in ev.loaders:
        if worker is not None and worker.pid in loader.get("pids", ()):
            return loader
    return ev.loaders[0] if len(ev.loaders) == 1 else None


def at_loader(diag, ev, worker):
    if worker is not None and getattr(worker, "rank", None) is not None:
        diag.rank = worker.rank
    loader = loader_of(ev, worker)
    if loader is not None and loader.get("line"):
        diag.path, diag.line = loader["path"], loader["line"]
        diag.evidence.append("the DataLoader made at %s:%d (num_workers=%s)" % (
            relative(loader["path"]), loader["line"], loader.get("num_workers")))
    return diag


FAULT_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+) in')


def user_fault_frame(stack):
    for match in FAULT_FRAME.finditer(stack):  # most recent call first
        if not is_library(match["path"]):
            return match["path"], int(match["line"])
    return None


def symptom_texts(ev):
    """Every warning, line and exception, of DataLoader crashes and of the others (a test's
    assertion on the batches is not a DataLoader failure, but it is what shows these)."""
    for warning in ev.warnings:
        yield None, warning
    yield from texts(ev)
    for crash in ev.hints.get("other_crashes") or ():
        for last in crash["exceptions"]:
            for exc in last.chain():
                yield exc, "%s: %s" % (exc.type, exc.message)


def found_in(texts, patterns):
    for exc, text in texts:
        for pattern in patterns:
            if re.search(pattern, text):
                return exc, text
    return None


def by_signature(code, order, confidence="likely", symptoms=True):
    """The diagnosis rule of a cause that a run shows only by its own words (its record's
    ``signatures``): ``code`` with the first line that has them, placed where the
    exception points. ``symptoms``: read warnings and the other crashes too, not only
    the DataLoader's lines and exceptions."""
    signatures = RULES[code].texts("signatures")

    @rule(order)
    def diagnose(ev):
        found = (found_in(symptom_texts(ev), signatures) if symptoms
                 else find(ev, *signatures))
        if not found:
            return None
        exc, text = found[:2]
        return locate(Diagnosis(code, confidence, [first_line(text)[:300]]), ev, exc)

    diagnose.__name__ = diagnose.__qualname__ = code.lower()
    diagnose.code = code  # the cause's own rule, made here
    return diagnose


def deepest_user_frame(ev):
    """The user's innermost frame in the log: a worker's own first, then the main's."""
    for exc in ev.all_exceptions():
        if exc.original is not None and user_frame(exc.original) is not None:
            return user_frame(exc.original)
    for last in reversed(ev.exceptions):
        for exc in reversed(last.chain()):
            if user_frame(exc) is not None:
                return user_frame(exc)
    return None


def relative(path):
    """A path under the working directory, relative to it (SPEC: ``path``)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


#: how a worker's out-of-memory kill's evidence begins when fewer workers would not have
#: avoided the kill
MEMORY_UNEXPLAINED = "memory per worker does not explain the kill"
