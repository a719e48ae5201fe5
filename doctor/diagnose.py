"""Evidence -> ordered diagnoses: one small rule per cause, the root cause first.

Each rule reads the evidence record and returns a Diagnosis or None.  The rules are
tried in the order in which the failures happen in a run (construction, pickling
in the parent, the child's bootstrap, the worker's own code, signals, hangs), so
the first that holds is the root cause; what it explains (the generic "exited
unexpectedly", BrokenPipe, EOFError) is folded into its evidence.  Static findings
of other codes follow as separate, lower-confidence diagnoses.
"""
import math
import os
import re
import signal as _signal
import sys
from dataclasses import dataclass, field
from typing import List, Optional

from doctor import forecast
from flake8_dlworker import catalog
from flake8_dlworker.catalog import CAUSES, RULES
from flake8_dlworker.notebook import cell_place

#: static findings that break a run under each start method (the others never crash)
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

    @property
    def rule(self):
        return RULES[self.code]

    def to_json(self):
        place = {"path": self.path, "line": self.line}
        if self.cell is not None:  # SPEC: "cell" beside path and line, for notebooks only
            place = {"path": self.path, "cell": self.cell, "line": self.line}
        return {
            "code": self.code, "title": self.rule.title, "confidence": self.confidence,
            "explanation": self.rule.explanation, "evidence": self.evidence,
            **place, "patch": self.patch, "verified": self.verified,
        }


# -- helpers -------------------------------------------------------------------

def _texts(ev):
    """(exception, 'Type: message') for every exception printed, and the notable lines."""
    for exc in ev.all_exceptions():
        yield exc, "%s: %s" % (exc.type, exc.message)
    for line in ev.lines:
        yield None, line


def _find(ev, *patterns):
    """The first exception or line matching one of the patterns: (exc, text, match)."""
    regexes = [re.compile(p) for p in patterns]
    for exc, text in _texts(ev):
        for regex in regexes:
            match = regex.search(text)
            if match:
                return exc, text, match
    return None


def _first_line(text):
    return text.strip().split("\n", 1)[0].strip()


def finding_text(finding):
    """A static finding as evidence: ``train.py:14: DLW102 ...``, in a notebook
    ``train.ipynb:cell 3:2: DLW104 ...`` (the cell counted from 1, as ruff prints it)."""
    line = finding["line"]
    if finding.get("cell") is not None:
        line = cell_place(finding["cell"], line)
    return "%s:%s: %s %s" % (finding["path"], line, finding["code"], finding["text"])


def _static(ev, code):
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


def _locate(diag, ev, exc=None):
    """path/line: the static finding of this code, else the user's frame."""
    finding = _static(ev, diag.code)
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


def _signame(number):
    try:
        return _signal.Signals(number).name
    except ValueError:
        return "signal %d" % number


def _worker_with_signal(ev, *names):
    for worker in ev.worker_signals():
        if _signame(worker.signal) in names:
            return worker
    return None


def _worker_words(worker):
    who = "worker %d" % worker.worker_id if worker.worker_id is not None else "a worker"
    return "%s (pid %d)" % (who, worker.pid)


# -- the rules, in the order the failures happen ------------------------------------

def dlw106(ev):
    found = _find(ev, r"persistent_workers option needs num_workers > 0",
                  r"prefetch_factor option could only be specified in multiprocessing")
    if not found:
        return None
    exc, text, _ = found
    diag = Diagnosis("DLW106", "certain", [_first_line(text)])
    return _locate(diag, ev, exc)


def _pickle_texts():
    """(code, signatures) of the causes the pickling rule names, in their records' order
    (``pickle_order``)."""
    return [(code, RULES[code].texts("signatures")) for code in catalog.ordered("pickle_order")]


def pickling(ev):
    """DLW102-DLW104, DLW108: what the probe found unpicklable, or the error text."""
    if ev.probe:
        culprit = ev.probe[0]
        code = (culprit.get("code") or _code_from_text(culprit.get("error", ""))
                or catalog.ordered("pickle_order")[-1])
        diag = Diagnosis(code, "certain", [
            "pickle probe before the workers started: %s" % culprit["describe"],
            "pickling it fails with %s" % culprit["error"]])
        found = _find(ev, *[p for _, texts in _pickle_texts() for p in texts])
        if found and _first_line(found[1]) != culprit["error"]:
            diag.evidence.append("the run then printed: %s" % _first_line(found[1]))
        finding = _static(ev, code)
        if finding is None and culprit.get("file") and culprit.get("line"):
            diag.path, diag.line = culprit["file"], culprit["line"]
            return diag
        return _locate(diag, ev, found[0] if found else None)
    for code, patterns in _pickle_texts():
        found = _find(ev, *patterns)
        if found:
            exc, text, _ = found
            where = ""
            if exc and exc.process != "main":
                where = " (printed by a %s process)" % exc.process
            diag = Diagnosis(code, "certain" if _static(ev, code) else "likely",
                             [_first_line(text) + where])
            if exc is not None and exc.process == "queue feeder thread":
                diag.evidence.append(
                    "a worker returned a sample that cannot be pickled: its queue's feeder "
                    "thread failed to send it, so that batch never reaches the main process "
                    "(return tensors, arrays or plain data from __getitem__ and collate_fn)")
            _pickle_notes(diag, text)
            diag = _locate(diag, ev, exc)
            main = re.search(r"<module '__mp_main__' from '([^']+)'>", text)
            if _static(ev, code) is None:
                _at_definition(diag, ev, text, main.group(1) if main else None)
            if diag.path is None and deepest_user_frame(ev) is None and main:
                diag.path = main.group(1)  # the script the child could not find it in
            return diag
    return None


def _at_definition(diag, ev, text, main_script):
    """Point at the definition of the object the message names, when its file is here."""
    from doctor.definitions import find_definition

    files = [main_script] if main_script else []
    for exc in ev.all_exceptions():
        for frame in reversed(exc.frames):
            if not is_library(frame.path) and frame.path not in files:
                files.append(frame.path)
    found = find_definition(text, files[:8], _source_roots(ev))
    if found:
        diag.path, diag.line = found
        diag.evidence.append("the object is defined at %s:%d" % (relative(found[0]), found[1]))


def _source_roots(ev):
    """The folders whose files may be read: a log's paths are untrusted (doctor.sourcefile)."""
    return ev.hints.get("source_roots", []) if ev.source == "log" else None


#: the worker Process's args tuple (torch/utils/data/dataloader.py): which item is what
_WORKER_ARGS = {1: "the dataset", 6: "collate_fn", 9: "worker_init_fn"}


def _pickle_notes(diag, text):
    """Python 3.14's pickle notes name the path to the culprit inside the worker args."""
    notes = re.findall(r"^when serializing (.+)$", text, re.M)
    if not notes:
        return
    diag.evidence.append("pickle notes: " + " <- ".join(notes))
    for note in reversed(notes):  # outermost first
        item = re.match(r"tuple item (\d+)$", note)
        if item and "_args" in text:
            what = _WORKER_ARGS.get(int(item.group(1)))
            if what:
                diag.evidence.append("the object that failed is reached from %s "
                                     "(item %s of the worker's arguments)" % (what, item.group(1)))
            break


def _code_from_text(text):
    for code, patterns in _pickle_texts():
        if any(re.search(pattern, text) for pattern in patterns):
            return code
    return None


def dlw101(ev):
    found = _find(ev, r"before the\s+current process has finished its bootstrapping phase")
    if not found:
        return None
    exc, _text, _ = found
    who = "a spawned child" if exc is None or exc.process != "main" else "the process"
    diag = Diagnosis("DLW101", "certain", [
        "%s re-ran the script's module-level code as __mp_main__ and tried to start "
        "workers of its own: RuntimeError: An attempt has been made to start a new process "
        "before the current process has finished its bootstrapping phase." % who])
    frame = user_frame(exc)
    if frame is not None and _static(ev, "DLW101") is None:
        diag.evidence.append("the child was at %s:%d when it tried" % (frame.path, frame.line))
    return _locate(diag, ev, exc)


def dlw107(ev):
    found = _find(ev, r"Cannot re-initialize CUDA in forked subprocess",
                  r"Torch not compiled with CUDA enabled", r"Found no NVIDIA driver",
                  r"CUDA error: initialization error", r"CUDA out of memory",
                  r"CUDA error: [\w -]+", r"CUDA driver initialization failed",
                  r"CUDA call failed lazily at initialization", r"cudaError\w+",
                  r"CUBLAS_STATUS_\w+", r"CUDNN_STATUS_\w+")
    if not found:
        return _cuda_tensor_sent(ev)
    exc, text, _ = found
    # a spawned child's own CUDA error: unpickling the dataset's CUDA tensors in the worker
    in_worker = exc is not None and (exc.process.startswith(("worker", "child")) or (
        exc.original is not None and exc.original.process.startswith("worker")
        and found[2].group(0) in exc.original.message))
    if not in_worker and _static(ev, "DLW107") is None:
        return _cuda_tensor_sent(ev)
    if in_worker and not exc.process.startswith(("worker", "child")):
        exc = exc.original  # torch re-raised it in the main process: quote the worker's
        text = "%s: %s" % (exc.type, exc.message)
    diag = Diagnosis("DLW107", "certain" if in_worker else "likely",
                     [_first_line(text) + (" (raised in %s)" % exc.process if in_worker else "")])
    return _locate(diag, ev, None if exc is None else exc)


def _cuda_tensor_sent(ev):
    """A CUDA tensor on the dataset, pickled for the workers: Windows cannot share it."""
    found = _find(ev, r"cuda runtime error \(801\)", r"Attempted to send CUDA tensor",
                  r"StorageSharing\.cpp")
    shared = next((exc for exc in ev.all_exceptions()
                   if any(f.func in ("_share_cuda_", "reduce_tensor") for f in exc.frames)
                   and re.search(r"CUDA|cuda", exc.message)), None)
    if not found and shared is None:
        return None
    exc = found[0] if found else shared
    diag = Diagnosis("DLW107", "certain", [
        _first_line(found[1]) if found else shared.last_line(),
        "a CUDA tensor was being pickled to send it to the workers: the dataset (or collate_fn "
        "or worker_init_fn) holds CUDA tensors"])
    return _locate(diag, ev, exc)


def dlw204(ev):
    found = _find(ev, r"Too many open files", r"received 0 items of ancdata",
                  r"\[Errno 24\]")
    if not found:
        return None
    diag = Diagnosis("DLW204", "certain", [_first_line(found[1])])
    limit = ev.host.get("nofile_limit")
    if limit:
        diag.evidence.append("open-files limit (RLIMIT_NOFILE) of the run: %d" % limit)
    if ev.sharing_strategy:
        diag.evidence.append("tensor sharing strategy: %s" % ev.sharing_strategy)
    return _locate(diag, ev, found[0])


def dlw202(ev):
    worker = _worker_with_signal(ev, "SIGBUS")
    found = _find(ev, r"Unexpected bus error encountered in worker",
                  r"killed by signal: Bus error", r"unable to allocate shared memory",
                  r"insufficient shared memory", r"unable to write to file </torch_")
    if worker is None and not found:
        return None
    diag = Diagnosis("DLW202", "certain", [])
    if worker is not None:
        diag.evidence.append("%s was killed by signal %d (SIGBUS)" % (
            _worker_words(worker), worker.signal))
    if found:
        diag.evidence.append(_first_line(found[1]))
    shm = ev.host.get("shm_gb")
    if shm is not None:
        used = ev.host.get("shm_used_gb")
        diag.evidence.append("/dev/shm: %.2f GiB%s" % (
            shm, "" if used is None else ", %.2f GiB in use at the end" % used))
    if worker is not None:
        return _at_loader(diag, ev, worker)
    return _locate(diag, ev, found[0] if found else None)


#: macOS aborts a forked child that touches an Objective-C class another thread was
#: initialising (libobjc's fork safety)
_OBJC_FORK = r"may have been in progress in another thread when fork\(\) was called"


def dlw203(ev):
    worker = _worker_with_signal(ev, "SIGSEGV", "SIGABRT", "SIGFPE", "SIGILL")
    found = _find(ev, r"Unexpected segmentation fault encountered in worker",
                  r"Unexpected floating-point exception encountered in worker",
                  r"killed by signal: (Segmentation fault|Aborted|Abort trap|"
                  r"Floating point exception)",
                  r"Fatal Python error: (Segmentation fault|Aborted)",
                  r"terminate called after throwing", _OBJC_FORK)
    if worker is None and not found:
        return None
    diag = Diagnosis("DLW203", "certain", [])
    objc = _find(ev, _OBJC_FORK)
    if objc:
        diag.evidence.append(
            "macOS's Objective-C runtime aborted a worker started with fork (its fork "
            "safety check): start the workers with spawn, the macOS default: %s"
            % _first_line(objc[1])[:200])
    if worker is not None:
        diag.evidence.append("%s was killed by signal %d (%s)" % (
            _worker_words(worker), worker.signal, _signame(worker.signal)))
    if found:
        diag.evidence.append(_first_line(found[1]))
    stack = _crash_stack(ev)
    if stack:
        diag.evidence.append("the worker's stack when it crashed:\n" + stack)
        frame = _user_fault_frame(stack)
        if frame:
            diag.path, diag.line = frame
    return diag if diag.path else _locate(diag, ev, found[0] if found else None)


def _crash_stack(ev):
    for stack in ev.stacks:
        if stack.startswith("Fatal Python error"):
            return _user_thread(stack) or stack
    return None


def _user_thread(stack, in_worker=False):
    """Of a faulthandler dump, the first thread block that runs the user's code
    (in a DataLoader worker, if asked), without the list of extension modules."""
    header = stack.split("\n", 1)[0] if stack.startswith("Fatal Python error") else None
    blocks = re.split(r"\n(?=(?:Current thread|Thread) 0x)", stack)
    for block in blocks:
        block = block.split("\nExtension modules:", 1)[0].strip()
        if not block.startswith(("Current thread", "Thread")):
            continue
        if in_worker and "_worker_loop" not in block:
            continue
        if _user_fault_frame(block):
            return (header + "\n" + block) if header else block
    return None


def _loader_of(ev, worker):
    """The DataLoader record whose workers include ``worker``: where to lower them."""
    for loader in ev.loaders:
        if worker is not None and worker.pid in loader.get("pids", ()):
            return loader
    return ev.loaders[0] if len(ev.loaders) == 1 else None


def _at_loader(diag, ev, worker):
    loader = _loader_of(ev, worker)
    if loader is not None and loader.get("line"):
        diag.path, diag.line = loader["path"], loader["line"]
        diag.evidence.append("the DataLoader made at %s:%d (num_workers=%s)" % (
            relative(loader["path"]), loader["line"], loader.get("num_workers")))
    return diag


_FAULT_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+) in')


def _user_fault_frame(stack):
    for match in _FAULT_FRAME.finditer(stack):  # most recent call first
        if not is_library(match["path"]):
            return match["path"], int(match["line"])
    return None


#: pickle's 4 GiB limit (protocol 3, Python 3.7 and older, or a script asking for it)
_PICKLE_LIMIT = (r"cannot serialize a (?:bytes|string) object larger than 4 ?GiB",
                 r"serializing a (?:bytes|str) object larger than 4 ?GiB requires pickle "
                 r"protocol 4")
#: a copy of the dataset smaller than this is never what filled a worker
LARGE_COPY_GB = 64 / 1024.0
#: the copy's share of the killed worker's peak memory that makes it the cause
COPY_SHARE = 0.25


def _copies(ev, worker):
    """What the worker's loader sends each worker as its dataset: (bytes, seconds, workers)."""
    loader = _loader_of(ev, worker)
    key = loader.get("key") if loader is not None else None
    parts = [p for p in ev.payload if p.get("role") == "dataset"
             and (key is None or p.get("key") == key)]
    if not parts:
        return None
    part = max(parts, key=lambda p: p.get("bytes") or 0)
    return part.get("bytes") or 0, part.get("seconds") or 0.0, part.get("workers") or 1


def _grew(ev, worker):
    predicted = forecast.for_run(ev)
    role = "worker %s" % worker.worker_id
    return predicted is not None and any(g.role == role for g in predicted.growing)


def _while_starting_a_worker(exc):
    return exc is not None and any(f.path.replace("\\", "/").endswith(_SENDS_ARGUMENTS)
                                   for f in exc.frames)


_SENDS_ARGUMENTS = ("multiprocessing/reduction.py", "multiprocessing/popen_spawn_win32.py",
                    "multiprocessing/popen_spawn_posix.py",
                    "multiprocessing/popen_forkserver.py")


def dlw209(ev):
    found = _find(ev, *_PICKLE_LIMIT)
    if found is None:  # Python 3.8+: the copy is made, the parent's memory runs out
        found = next(((exc, "%s: %s" % (exc.type, exc.message), None)
                      for exc in ev.all_exceptions()
                      if exc.type == "MemoryError" and _while_starting_a_worker(exc)), None)
    if found is not None:
        said = found[0].last_line() if found[0] is not None else _first_line(found[1])
        diag = Diagnosis("DLW209", "certain", [said])
        if _while_starting_a_worker(found[0]):
            diag.evidence.append("raised while the parent pickled a worker's arguments "
                                 "(multiprocessing.reduction.dump) to start it")
        return _locate(diag, ev, found[0])
    worker = _worker_with_signal(ev, "SIGKILL")
    if worker is None or _grew(ev, worker):
        return None  # a worker that grew while it ran is DLW201's
    copies = _copies(ev, worker)
    if copies is None:
        return None
    size, seconds, workers = copies
    size_gb = size / 1024.0 ** 3
    if size_gb < LARGE_COPY_GB:
        return None
    share = size_gb / worker.peak_rss_gb if worker.peak_rss_gb else None
    available = worker.available_gb or ev.host.get("ram_gb")
    of_available = size_gb * workers / available if available else None
    if not ((share or 0) >= COPY_SHARE or (of_available or 0) >= COPY_SHARE):
        return None
    text = "%s was killed by signal 9 (SIGKILL)" % _worker_words(worker)
    if worker.peak_rss_gb is not None:
        text += " at %.2f GiB" % worker.peak_rss_gb
        if share is not None and share <= 1:  # else sampled before its copy arrived
            text += ", %d%% of it its copy of the dataset" % round(100 * share)
    evidence = [text + "; its memory did not grow while it ran"]
    total = "each of %d workers receives its own pickled copy of the dataset: %s" % (
        workers, _size(size_gb))
    if seconds >= 0.01:
        total += " (pickled in %.2f s)" % seconds
    total += ", %s in all" % _size(size_gb * workers)
    if of_available is not None:
        total += ", %d%% of the %.2f GiB available" % (round(100 * of_available), available)
    evidence.append(total)
    diag = Diagnosis("DLW209", "certain" if (share or 0) >= COPY_SHARE else "likely",
                     evidence)
    return _at_loader(diag, ev, worker)


def _size(gb):
    return "%.1f GiB" % gb if gb >= 1 else "%.0f MiB" % (gb * 1024)


def dlw210(ev):
    """Under fork, workers whose memory rises with the batches while the dataset holds
    large Python containers: copy-on-access, not a leak."""
    if ev.start_method != "fork" or not ev.containers:
        return None
    predicted = forecast.for_run(ev)
    if predicted is None:
        return None
    evidence = predicted.text()
    evidence.append("the dataset holds Python objects, whose reference counts every read "
                    "writes, so each forked worker copies the pages it reads: " + ", ".join(
                        "%s (a %s of %s)" % (c["path"], c["type"], "{:,}".format(c["length"]))
                        for c in ev.containers[:4]))
    worker = _worker_with_signal(ev, "SIGKILL")
    if worker is not None:
        evidence.insert(0, "%s was killed by signal 9 (SIGKILL), most likely the "
                           "out-of-memory killer" % _worker_words(worker))
    diag = Diagnosis("DLW210", "likely", evidence)
    return _at_loader(diag, ev, worker)


def dlw201(ev):
    worker = _worker_with_signal(ev, "SIGKILL")
    found = _find(ev, r"killed by signal: Killed", r"Out of memory: Kill", r"OOMKilled")
    if worker is None and not found:
        return None
    if worker is not None:
        used = "an unmeasured amount"
        if worker.peak_rss_gb is not None:
            used = "%.2f GiB" % worker.peak_rss_gb
        avail = ev.host.get("ram_gb")
        text = "%s was killed by signal 9 (SIGKILL) while using %s" % (_worker_words(worker), used)
        if worker.available_gb is not None and avail:
            text += " of %.2f GiB available (host RAM %.1f GiB)" % (worker.available_gb, avail)
        evidence = [text]
        if len(worker.rss_gb) > 1:
            steps = worker.rss_gb[-8:]
            evidence.append("its RSS over the run: " + ", ".join(
                "%.2f GiB at %.1fs" % (gb, t) for t, gb in steps))
        peaks = [w.peak_rss_gb for w in ev.workers if w.peak_rss_gb is not None]
        if len(peaks) > 1:
            evidence.append("peak RSS per worker: " + ", ".join("%.2f GiB" % p for p in peaks))
        predicted = forecast.for_run(ev)  # which worker grew, how fast, and how far
        if predicted is not None:
            evidence.extend(predicted.text())
        evidence.extend(_memory_unexplained(ev, worker, peaks))
        # SIGKILL is what the OOM killer sends; memory nearly gone makes it certain
        tight = (worker.available_gb is not None and avail
                 and worker.available_gb < 0.05 * avail)
        diag = Diagnosis("DLW201", "certain" if tight else "likely", evidence)
        return _at_loader(diag, ev, worker)
    diag = Diagnosis("DLW201", "likely", [_first_line(found[1])])
    killer = _find(ev, r"Out of memory: Kill", r"oom[-_]kill", r"OOM ?Killed")
    if killer and killer[1] != found[1]:
        diag.confidence = "certain"  # the kernel or the scheduler says it was the OOM killer
        diag.evidence.append(_first_line(killer[1]))
    return _locate(diag, ev, found[0] if found else None)


#: how DLW201's evidence begins when fewer workers would not have avoided the kill
MEMORY_UNEXPLAINED = "memory per worker does not explain the kill"


def _memory_unexplained(ev, worker, peaks):
    """A line when the workers' peaks fit many times over in the memory available at
    the kill: then no worker count avoids it (a limit the doctor could not read, a leak
    that grows without bound, or another sender of SIGKILL)."""
    counts = [loader.get("num_workers") for loader in ev.loaders if loader.get("num_workers")]
    workers = max(counts) if counts else len(ev.workers)
    peak = max(peaks) if peaks else worker.peak_rss_gb
    room = worker.available_gb
    if not workers or not peak or room is None or math.floor(room / peak) < workers:
        return []
    return ["%s: the run had %d worker(s) and the %.2f GiB available would hold %d at "
            "%.2f GiB peak each, so fewer workers would not have avoided it; look for a "
            "memory limit the doctor could not read, a cache that grows without bound, or "
            "another sender of SIGKILL" % (MEMORY_UNEXPLAINED, workers, room,
                                           math.floor(room / peak), peak)]


def dlw207(ev):
    found = _find(ev, r"WinError 1455", r"paging file is too small", r"error code: <1455>",
                  "\u9875\u9762\u6587\u4ef6\u592a\u5c0f")  # the Chinese wording
    # torch's shared file mappings on Windows fail with "not enough memory" and "no
    # system resources" when the commit charge is at its limit, too
    near = None if found else _find(ev, r"shared file.*error code: <(8|1450)>")
    if not found and not near:
        return None
    diag = Diagnosis("DLW207", "certain" if found else "likely", [_first_line((found or near)[1])])
    found = found or near
    diag.evidence.extend(_commit_arithmetic(ev))
    return _locate(diag, ev, found[0])


#: torch's DLLs whose writable sections Windows commits in every process that loads them
_CUDA_DLL = re.compile(r"(?i)(cudnn|cublas|cufft|cusparse|cusolver|curand|nvrtc|nvfuser|"
                       r"caffe2\w*gpu|torch_cuda|c10_cuda)\w*\.dll")


def _commit_arithmetic(ev):
    """DLW207: the per-worker commit charge, with the numbers the evidence holds."""
    failed = sum(1 for exc in ev.all_exceptions()
                 if "1455" in exc.message and exc.type in ("OSError", "WindowsError"))
    workers = failed
    for exc, text in _texts(ev):
        pids = re.search(r"DataLoader worker \(pid\(s\) ([\d, ]+)\) exited", text)
        if pids:
            workers = max(workers, len(pids.group(1).split(",")))
    for warning in ev.warnings:
        planned = re.search(r"will create (\d+) worker processes", warning)
        if planned:
            workers = max(workers, int(planned.group(1)))
    for loader in ev.loaders:
        if isinstance(loader.get("num_workers"), int):
            workers = max(workers, loader["num_workers"])
    dll = _find(ev, r"Error loading \"[^\"]*?([\w.-]+\.dll)\"")
    cuda = dll is not None and _CUDA_DLL.search(dll[2].group(1))
    low, high = (1.0, 2.0) if cuda or dll is None else (0.3, 1.0)
    found = []
    if failed:
        found.append("%d worker process%s failed while importing torch%s" % (
            failed, "" if failed == 1 else "es",
            " (loading %s)" % dll[2].group(1) if dll else ""))
    if workers:
        processes = workers + 1
        found.append(
            "commit charge: every worker is a new process that loads torch's %sDLLs, "
            "about %.1f-%.1f GB committed per process; %d worker%s + the main process = "
            "%d x %.1f-%.1f GB = %.0f-%.0f GB before any data is loaded, and Windows refuses "
            "to commit past RAM + paging file" % (
                "CUDA " if cuda or dll is None else "", low, high, workers,
                "" if workers == 1 else "s", processes,
                low, high, processes * low, processes * high))
        fewer = max(1, workers // 2)
        if fewer < workers:
            found.append("num_workers=%d would commit about %.0f-%.0f GB less; or enlarge "
                         "the paging file by at least that much" % (
                             fewer, (workers - fewer) * low, (workers - fewer) * high))
    else:
        found.append("each worker commits about %.1f-%.1f GB for torch's DLLs when it starts: "
                     "num_workers x that must fit in RAM + paging file" % (low, high))
    return found


def dlw105(ev):
    """The pin-memory thread died (page-locked host memory, or torch 1.7's bug)."""
    found = _find(ev, r"Pin memory thread exited unexpectedly",
                  r"Caught \w+ in pin memory thread for device")
    pinned = [exc for exc in ev.all_exceptions()
              if exc.process == "pin memory thread" and exc.type
              and "can only test a child process" not in exc.message]  # shutdown noise
    if not found and not pinned:
        return None
    exc = pinned[0] if pinned else found[0]
    text = exc.last_line() if exc is not None else _first_line(found[1])
    memory = re.search(r"out of memory|CUDA error|cannot allocate|pinned", text, re.I)
    diag = Diagnosis("DLW105", "likely" if memory else "possible",
                     ["the pin-memory thread failed: %s" % text])
    if re.search(r"not enough values to unpack \(expected 2, got 0\)", text):
        diag.evidence.append("this is torch 1.7's persistent_workers + pin_memory bug "
                             "(fixed in 1.8): upgrade torch, or set pin_memory=False")
    return _locate(diag, ev, found[0] if found else exc)


def dlw205(ev):
    for exc in ev.all_exceptions():
        if exc.original is not None and exc.process == "main" and exc.original.type:
            original = exc.original
            diag = Diagnosis("DLW205", "certain", [
                "%s raised %s" % (original.process, original.last_line())])
            frame = user_frame(original)
            if frame is not None:
                diag.path, diag.line = frame.path, frame.line
                diag.evidence.append("raised at %s:%d in %s" % (frame.path, frame.line, frame.func))
            return diag
    return None


#: a run ended by --timeout counts as stuck when no worker started and no batch came for
#: this long before the end (the stuck worker's stack says where it waits)
STUCK_S = 5.0


def dlw206(ev):
    from doctor.stacks import stuck_thread

    found = _find(ev, r"DataLoader timed out after \d+ seconds")
    # a run's own dumps are taken on --timeout, when its main process may merely be between
    # batches; a log's dump was taken because the program hung
    stuck = stuck_thread(ev.stacks, is_library, main_waiting=ev.source == "log")
    if found:
        diag = Diagnosis("DLW206", "certain", [_first_line(found[1])])
    elif ev.outcome == "timeout" or _ended_by_a_signal(ev):
        diag = _stuck_at_timeout(ev, stuck)
    elif stuck is not None:
        diag = Diagnosis("DLW206", "likely", [
            "a stack dump%s shows the DataLoader's %s waiting, with no error printed" % (
                " taken by faulthandler's watchdog" if stuck.watchdog else "", stuck.kind)])
    else:
        diag = None
    if diag is None:
        return None
    if stuck is not None:
        diag.evidence.append("the stack of the stuck %s (%s):\n%s" % (
            stuck.kind, _waits_in(stuck), stuck.thread.text()))
        if stuck.frame is not None:
            diag.path, diag.line = stuck.frame
        if stuck.other_threads and stuck.kind == "worker":
            diag.evidence.append(
                "the process that started the workers ran other threads: %s; under fork a "
                "worker inherits every lock one of them held at that moment, held for ever"
                % ", ".join("'%s'" % name for name in stuck.other_threads[:6]))
    for warning in ev.warnings:  # what makes a forked worker deadlock
        if re.search(r"is multi-threaded, use of fork\(\) may lead to deadlocks|"
                     r"^TokenizersWarning: The current process just got forked", warning):
            diag.evidence.append("the workers were forked from a process that already ran "
                                 "threads, a known cause of deadlocks: " + warning[:200])
    return diag if diag.path else _locate(diag, ev, found[0] if found else None)


def _ended_by_a_signal(ev):
    """A run the doctor ended because it received SIGINT, SIGTERM or SIGHUP."""
    return ev.source == "run" and ev.outcome == "stopped" and \
        ev.hints.get("stopped_by") == "signal"


def _stuck_at_timeout(ev, stuck):
    """DLW206 from a run ended by --timeout or by a signal to the doctor, only when the
    evidence shows a stuck loader: it had workers, none delivered a batch for STUCK_S
    before the end, and a stack shows where one waits. A run whose batches still flowed,
    whose workers were still starting (spawn re-imports everything each epoch), or that
    had no workers, was cut short."""
    if ev.source != "run" or stuck is None:
        return None
    idle = ev.hints.get("idle_s")
    with_workers = [loader for loader in ev.loaders if loader.get("pids")]
    if not with_workers or idle is None or idle < STUCK_S:
        return None
    ended = ("ended after %gs (--timeout)" % (ev.timeout_s or 0) if ev.outcome == "timeout"
             else "ended by a signal to the doctor")
    return Diagnosis("DLW206", "likely", [
        "no DataLoader worker delivered a batch in the last %.0fs before the run was "
        "%s; %d batches had come before" % (idle, ended, ev.hints.get("batches", 0))])


#: the words with which torch, Lightning and users' own checks report the same samples
#: from every worker of an IterableDataset (DLW109) and the same random draws (DLW111)
_DUPLICATES = (r"not properly configuring the IterableDataset replica at each worker",
               r"each worker is not configured independently to avoid having duplicate data",
               r"(?i)duplicat\w* (samples?|data|items?|rows?|records?|examples?)\b.*workers?"
               r"|workers?\b.*duplicat\w* (samples?|data|items?|rows?|records?|examples?)"
               r"|\bsame (samples?|data|items?|rows?|records?|examples?)\b.*\bworkers?\b"
               r"|\bworkers?\b.*\bsame (samples?|data|items?|rows?|records?|examples?)\b",
               r"(?i)IterableDataset\b.*\b(duplicat\w*|repeated|twice|\d+ times)"
               r"|\b(duplicat\w*|repeated|twice|\d+ times)\b.*\bIterableDataset")
_SAME_DRAWS = (r"(?i)(identical|same)\b[^\n]{0,60}\b(augment\w*|random\w*|crops?|draws?|"
               r"flips?|rng|seeds?|noise|transforms?)\b[^\n]{0,80}\bworkers?\b"
               r"|\bworkers?\b[^\n]{0,80}\b(identical|same)\b[^\n]{0,60}"
               r"\b(augment\w*|random\w*|crops?|draws?|flips?|rng|seeds?|noise|transforms?)\b",
               r"(?i)\b(identical|same|duplicat\w*) (augmentations?|random (crops?|numbers|draws|"
               r"transforms?|values|flips?|noise))\b")


def _symptom_texts(ev):
    """Every warning, line and exception, of DataLoader crashes and of the others (a test's
    assertion on the batches is not a DataLoader failure, but it is what shows these)."""
    for warning in ev.warnings:
        yield None, warning
    yield from _texts(ev)
    for crash in ev.hints.get("other_crashes") or ():
        for last in crash["exceptions"]:
            for exc in last.chain():
                yield exc, "%s: %s" % (exc.type, exc.message)


def _found_in(texts, patterns):
    for exc, text in texts:
        for pattern in patterns:
            if re.search(pattern, text):
                return exc, text
    return None


def dlw109(ev):
    found = _found_in(_symptom_texts(ev), _DUPLICATES)
    if not found:
        return None
    exc, text = found
    diag = Diagnosis("DLW109", "likely", [_first_line(text)[:300]])
    return _locate(diag, ev, exc)


def dlw111(ev):
    found = _found_in(_symptom_texts(ev), _SAME_DRAWS)
    if not found:
        return None
    exc, text = found
    diag = Diagnosis("DLW111", "likely", [_first_line(text)[:300]])
    return _locate(diag, ev, exc)


def dlw110(ev):
    for warning in ev.warnings:
        match = re.search(r"will create (\d+) worker processes in total.*?"
                          r"suggested max number of worker in current system is (\d+)", warning)
        if match:
            diag = Diagnosis("DLW110", "certain", [warning.split(". ")[0] + "."])
            diag.evidence.append("num_workers=%s, usable CPUs: %s" % match.groups())
            for loader in ev.loaders:
                if str(loader.get("num_workers")) == match.group(1) and loader.get("line"):
                    diag.path, diag.line = loader["path"], loader["line"]
                    return diag
            return _locate(diag, ev)
    return None


def _waits_in(stuck):
    """The blocking frame, the library call the user's code made to get there, and the
    user's line ("it waits in acquire, logging/__init__.py:917, called through info ...")."""
    frames = stuck.thread.frames
    inner = frames[0]
    busy = (stuck.thread.state or "").startswith("active") and not is_library(inner[0])
    words = "it %s in %s, %s:%d" % ("is busy" if busy else "waits", inner[2], inner[0], inner[1])
    users = [i for i, f in enumerate(frames) if not is_library(f[0])]
    if users and users[0] > 1:
        call = frames[users[0] - 1]
        words += ", called through %s, %s:%d" % (call[2], call[0], call[1])
    if users and users[0] > 0:
        words += ", from the user's code at %s:%d" % frames[users[0]][:2]
    return words


def worker_exit(ev):
    """A worker ended with an exit status and nothing else says why."""
    found = _find(ev, r"exited unexpectedly with exit code (\d+)")
    for worker in ev.workers:
        if worker.exitcode not in (None, 0) and not worker.signal:
            printed = [exc for exc in ev.all_exceptions() if exc.process != "main"]
            said = ("; the last error a child process printed: %s (%s)" % (
                printed[-1].last_line()[:300], printed[-1].process) if printed
                else " and printed no traceback")
            return Diagnosis("DLW205", "possible", ["%s exited with status %d%s" % (
                _worker_words(worker), worker.exitcode, said)])
    if found and ev.source != "log":
        return Diagnosis("DLW205", "possible", [_first_line(found[1])])
    return None  # a log: only the generic symptom, see generic()


RULES_IN_ORDER = (dlw106, dlw209, pickling, dlw101, dlw107, dlw204, dlw202, dlw203, dlw210,
                  dlw201, dlw207, dlw105, dlw205, dlw206, worker_exit, dlw109, dlw111, dlw110)


def generic(ev):
    """Only the generic last line: the likely causes, each ``possible``."""
    found = _find(ev, r"DataLoader worker \(pid\(s\) [\d, ]+\) exited unexpectedly",
                  r"BrokenPipeError: \[Errno 32\]", r"EOFError: Ran out of input",
                  r"\[WinError 5\] Access is denied")
    if not found:
        return []
    line = _first_line(found[1])
    script = "SCRIPT"
    for exc in ev.all_exceptions():
        frame = user_frame(exc)
        if frame is not None and frame.path.endswith(".py"):
            script = relative(frame.path)
            break
    # what a bare "exited unexpectedly" can mean (the records' ``generic``), most common
    # first; on Windows no OOM killer and no /dev/shm, the commit limit instead
    family = "windows" if (ev.hints.get("os") or ev.host.get("os") or "").startswith(
        "Windows") else "posix"
    causes = catalog.flagged("generic") + catalog.flagged("generic", family)
    return [Diagnosis(code, "possible", [
        "the log holds only the generic symptom, not the error that caused it: %s" % line,
        "run the script under the doctor to see which: python -m doctor %s" % script])
        for code in causes]


def unexplained(ev):
    """A run that crashed with nothing above to explain it: say what was seen, so that
    the crash is still reported as a failure."""
    if ev.source != "run" or ev.outcome != "crashed":
        return None
    code = ev.exit_code
    if code is not None and code > 128:
        seen = "the main process was killed by %s (exit status %d)" % (_signame(code - 128), code)
    else:
        seen = "the script exited with status %s" % code
    diag = Diagnosis("DLW208", "possible", [seen])
    last = ev.exceptions[-1] if ev.exceptions else None
    if last is not None:
        diag.evidence.append("the last error printed: %s (%s)" % (last.last_line()[:300],
                                                                  last.process))
        frame = user_frame(last)
        if frame is not None:
            diag.path, diag.line = frame.path, frame.line
    if code == 128 + 9:
        diag.evidence.append("SIGKILL without a traceback is most often the out-of-memory "
                             "killer, a job scheduler, or the script killing itself")
    return diag


def diagnose(ev):
    """The root cause first, then static findings of other codes."""
    found = []
    for rule in RULES_IN_ORDER:
        diag = rule(ev)
        if diag is not None:
            found.append(diag)
            break
    ruled = bool(found)
    if not found:
        found = generic(ev)
    if not found:
        found = [diag for diag in [unexplained(ev)] if diag is not None]
    if found and found[0].path is None:
        frame = deepest_user_frame(ev)
        for diag in found if found[0].confidence == "possible" else found[:1]:
            if diag.path is None and frame is not None:
                diag.path, diag.line = frame.path, frame.line
    if ruled and ev.source == "run":
        for loader in ev.loaders:
            if loader.get("overrode"):
                found[0].evidence.append(
                    "the DataLoader at %s:%s asked for multiprocessing_context=%r; the doctor "
                    "forced %s, as on Windows and macOS" % (
                        relative(loader["path"]), loader["line"], loader["overrode"],
                        ev.start_method))
    codes = {d.code for d in found}
    for finding in ev.static:
        if RULES[finding["code"]].flag("secondary") and finding["code"] not in codes:
            codes.add(finding["code"])
            found.append(Diagnosis(
                finding["code"], "likely" if ev.source == "run" else "possible",
                [finding_text(finding)], path=finding["path"], line=finding["line"],
                cell=finding.get("cell")))
    for diag in found:
        if diag.path:
            diag.path = relative(diag.path)
    return found


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
