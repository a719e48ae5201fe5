"""Text printed by a crashing run -> exceptions, notable lines, warnings, stacks.

One parser for both paths: the doctor feeds it what the target and its workers
printed on stderr, ``doctor explain`` feeds it a saved log.  It reads line by
line (a log of any size streams through in bounded memory) and keeps only what
the diagnosis rules read.
"""
import re

from doctor.evidence import Exc, Frame

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
#: prefixes that launchers and loggers put before every line
_PREFIX = re.compile(r"^(?:\[(?:rank|default)\d+\]:\s?|\d{4}-\d\d-\d\d[ T][\d:.,]+\s+(?:-\s+)?)")
_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):\s*$")
_ORIGINAL = re.compile(r"^\s*Original Traceback \(most recent call last\):\s*$")
_FRAME = re.compile(r'^\s+File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.*))?')
_EXC = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|"
                  r"error|Iteration|Fault|Abort|Killed)?)(?::\s?(?P<msg>.*))?$")
_CAUSE = ("The above exception was the direct cause of the following exception:",
          "During handling of the above exception, another exception occurred:")
_WORKER = re.compile(r"Caught \w+ in (DataLoader worker process \d+|DataLoader worker thread \d+|"
                     r"pin memory thread for device \d+)")
_WARNING = re.compile(r"(?:^|:\s)(?P<type>\w*Warning): (?P<msg>.*)$")
_FAULT_START = re.compile(r"^(Fatal Python error: .*|Current thread 0x[0-9a-f]+ .*|"
                          r"Thread 0x[0-9a-f]+ .*)$")
_FAULT_FRAME = re.compile(r'^\s+File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<func>.*)$')
#: single lines the diagnosis rules read, wherever they appear
_NOTABLE = re.compile(
    r"(ERROR: Unexpected .* encountered in worker|is killed by signal|exited unexpectedly|"
    r"terminate called after|core dumped|Out of memory|^Killed$|Bus error|Segmentation fault|"
    r"WinError|Too many open files|received 0 items of ancdata|shared memory|"
    r"timed out after|Python \d+\.\d+\.\d+|torch[ =_-]+(?:version[ :=]+)?\d+\.\d+|"
    r"[A-Z]:\\\\|/Users/|/home/|site-packages)")
MAX_KEPT = 2000  # notable lines and warnings kept; the rest are counted, not stored


def clean(line):
    """One physical log line as the program printed it: no colour, no CR rewrites,
    no NUL bytes, no rank or timestamp prefix."""
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    line = line.rstrip("\r\n")
    if "\r" in line:  # progress bars rewrite the line: what stayed on screen is the last
        parts = [p for p in line.split("\r") if p.strip()]
        line = parts[-1] if parts else ""
    if "\x00" in line:
        line = line.replace("\x00", "")
    match = _PREFIX.match(line)
    if match:
        line = line[match.end():]
    return line


class LogParser:
    """Feed lines with :meth:`feed`, then read :attr:`exceptions`, :attr:`lines`,
    :attr:`warnings` and :attr:`stacks`."""

    def __init__(self):
        self.exceptions = []   # the last exception of each printed chain
        self.lines = []
        self.warnings = []
        self.stacks = []
        self._pending = []     # lines of the block being read
        self._state = None     # None | "traceback" | "fault"
        self._context = None   # the exception the next traceback was raised from
        self._chained = False
        self._phase = None

    # -- input -------------------------------------------------------------
    def feed(self, raw):
        line = clean(raw)
        if self._state == "traceback":
            self._traceback_line(line)
            return
        if self._state == "fault":
            self._fault_line(line)
            return
        self._free_line(line)

    def feed_text(self, text):
        for raw in text.splitlines():
            self.feed(raw)
        return self.close()

    def close(self):
        if self._state == "traceback":
            self._finish_traceback()
        elif self._state == "fault":
            self._finish_fault()
        return self

    # -- outside any block ---------------------------------------------------
    def _free_line(self, line):
        stripped = line.strip()
        if _TRACEBACK.match(line):
            self._state = "traceback"
            self._phase = "frames"
            self._pending = [line]
            return
        if stripped in _CAUSE:
            self._chained = True
            return
        if _FAULT_START.match(stripped):
            self._state = "fault"
            self._pending = [stripped]
            return
        if not stripped:
            return
        if not self._chained:
            self._context = None
        warning = _WARNING.search(stripped)
        if warning and len(self.warnings) < MAX_KEPT:
            self.warnings.append("%s: %s" % (warning["type"], warning["msg"]))
        elif _NOTABLE.search(stripped) and len(self.lines) < MAX_KEPT:
            self.lines.append(stripped)

    # -- a traceback ---------------------------------------------------------
    def _traceback_line(self, line):
        """Frames, then the exception line, then its message: indented lines, and for
        a worker's re-raised exception the whole ``Original Traceback`` section."""
        pending = self._pending
        stripped = line.strip()
        indented = line.startswith((" ", "\t"))
        if self._phase == "frames":
            if indented or not stripped:
                pending.append(line)
                return
            if _TRACEBACK.match(line):  # a traceback cut short, a new one starts
                self._finish_traceback()
                self._free_line(line)
                return
            pending.append(line)
            self._phase = "wrapper" if _WORKER.search(line) else "message"
            return
        if self._phase == "wrapper":
            if _ORIGINAL.match(line):
                pending.append(line)
                self._phase = "original"
                return
        if self._phase == "original":
            if indented or not stripped:
                pending.append(line)
                return
            pending.append(line)
            self._phase = "message"
            return
        # the message: indented lines and blank lines between them belong to it
        if indented and stripped:
            pending.append(line)
            return
        if not stripped:
            pending.append(line)
            return
        self._finish_traceback()
        self._free_line(line)

    def _finish_traceback(self):
        exc = _parse_block(self._pending)
        self._state = None
        self._pending = []
        if exc is None:
            return
        if self._chained and self._context is not None:
            exc.context = self._context
            # the earlier exception is no longer the last of its chain
            if self.exceptions and self.exceptions[-1] is self._context:
                self.exceptions.pop()
        self._chained = False
        self._context = exc
        self.exceptions.append(exc)

    # -- a faulthandler dump -------------------------------------------------
    def _fault_line(self, line):
        stripped = line.strip()
        if (_FAULT_FRAME.match(line) or _FAULT_START.match(stripped)
                or stripped.startswith(("Extension modules:", "<no Python frame>",
                                        "Stack (most recent call first):"))):
            self._pending.append(line)
            return
        if not stripped:
            self._pending.append("")
            return
        self._finish_fault()
        self._free_line(line)

    def _finish_fault(self):
        text = "\n".join(self._pending).strip()
        self._state = None
        self._pending = []
        if text and len(self.stacks) < MAX_KEPT:
            self.stacks.append(text)
        if text.startswith("Fatal Python error") and len(self.lines) < MAX_KEPT:
            self.lines.append(text.split("\n", 1)[0])


def _parse_block(lines):
    """``Traceback (most recent call last):`` ... ``Type: message`` -> Exc."""
    frames, i = _frames(lines, 1)
    rest = lines[i:]
    while rest and not rest[-1].strip():
        rest.pop()
    if not rest:
        return None
    match = _EXC.match(rest[0].strip())
    if not match:
        return None
    message = "\n".join([match["msg"] or ""] + rest[1:]).strip("\n")
    exc = Exc(type=match["type"], message=message, frames=frames)
    exc.process = _process_of(frames)
    original = _original(rest)
    if original is not None:
        worker = _WORKER.search(message)
        original.process = _worker_name(worker.group(1)) if worker else "worker"
        exc.original = original
    return exc


def _frames(lines, i):
    frames = []
    while i < len(lines):
        line = lines[i]
        match = _FRAME.match(line)
        if match:
            frames.append(Frame(match["path"], int(match["line"]), (match["func"] or "").strip()))
        elif line and not line.startswith((" ", "\t")):
            break
        i += 1
    return frames, i


def _original(rest):
    for k, line in enumerate(rest):
        if _ORIGINAL.match(line):
            frames, j = _frames(rest, k + 1)
            tail = [x for x in rest[j:]]
            if not tail:
                return Exc(type="", message="", frames=frames)
            match = _EXC.match(tail[0].strip())
            if not match:
                return None
            message = "\n".join([match["msg"] or ""] + tail[1:]).strip("\n")
            return Exc(type=match["type"], message=message, frames=frames)
    return None


def _worker_name(where):
    if where.startswith("DataLoader worker process"):
        return "worker " + where.rsplit(" ", 1)[1]
    if where.startswith("DataLoader worker thread"):
        return "worker thread " + where.rsplit(" ", 1)[1]
    return "pin memory thread"


def _process_of(frames):
    """A traceback that starts in multiprocessing's spawn_main was printed by a child."""
    for frame in frames[:3]:
        if frame.func in ("spawn_main", "_main") and "multiprocessing" in frame.path:
            return "child"
    return "main"


def parse_text(text):
    return LogParser().feed_text(text)
