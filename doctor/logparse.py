"""Text printed by a crashing run -> exceptions, notable lines, warnings, stacks, hints.

One parser for both paths: the doctor feeds it what the target and its workers
printed on stderr, ``doctor explain`` feeds it a saved log.  It reads line by
line (a log of any size streams through in bounded memory: every list it keeps is
capped) and keeps only what the diagnosis rules read, each with the log line it
came from, so that a log holding several crashes can be cut into them.

What real logs contain and this copes with: CRLF, ANSI colour, the NUL byte torch's
worker signal handlers write after their ``ERROR:`` line, progress bars rewritten
with carriage returns (and a traceback glued to the end of the last bar),
``[rank0]:`` and timestamp prefixes, IPython/Jupyter tracebacks, Python 3.11+
exception notes (3.14's ``when serializing ...``), torch 1.x's re-raised worker
tracebacks, and logs cut short in the middle of a traceback.
"""
import re

from doctor.evidence import Exc, Frame
from flake8_dlworker.catalog import RULES

#: lines a distributed job's launcher, scheduler and collectives print (api.py, spawn.py,
#: ProcessGroupNCCL, gloo's tcp pair, srun and slurmstepd), read as notable lines
DISTRIBUTED_LINES = (
    r"Sending process \d+ closing signal", r"failed \(exitcode: -?\d+\) local_rank:",
    r"Terminating process \d+ via signal", r"Received Signals\.\w+ death signal",
    r"Watchdog caught collective operation timeout", r"watchdog got stuck",
    r"Some NCCL operations have failed or timed out", r"Connection closed by peer",
    r"gloo/transport/tcp/pair\.cc:\d+\] Read error", r"^srun: error: ",
    r"^slurmstepd: error: ")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
#: prefixes that launchers and loggers put before every line: torchrun's
#: ``[rank0]:``/``[default0]:`` (the rank, or the local rank under ``--tee``), ISO or
#: log-module timestamps, bracketed times, srun's ``--label`` task number (the rank)
_PREFIX = re.compile(
    r"^(?:\[(?:rank|default)(?P<rank>\d+)\]:\s?"
    r"|\[?(?P<iso>\d{4}-\d\d-\d\d[ T][\d:.,]+)(?:Z|[+-]\d\d:?\d\d)?\]? ?(?:[-|] )?"
    r"|\[\d\d:\d\d:\d\d(?:[.,]\d+)?\] ?"
    r"| ?(?P<label>\d{1,4}): )")  # srun --label: "0: ", "12: "
_TB_TEXT = "Traceback (most recent call last):"
#: torch.multiprocessing.spawn's ProcessRaisedException: the rank's own traceback follows
_SPAWN_ERROR = re.compile(r"^-- Process (?P<rank>\d+) terminated with the following error:$")
#: the elastic agent's error summary (ChildFailedError.format_msg): "Failures:", then
#: "Root Cause (first observed failure):", each entry "[0]:" and its "  key : value" lines
_ELASTIC_SECTIONS = {"Failures:": "failures", "Root Cause (first observed failure):": "root"}
_ELASTIC_ENTRY = re.compile(r"^\[(?P<idx>\d+)\]:$")
_ELASTIC_FIELD = re.compile(r"^ {1,4}(?P<key>time|host|rank|exitcode|error_file|traceback|msg)"
                            r"\s*: ?(?P<value>.*)$")
_ELASTIC_RANK = re.compile(r"^(?P<rank>\d+) \(local_rank: (?P<local>\d+)\)")
_ELASTIC_EXIT = re.compile(r"^(?P<code>-?\d+) \(pid: (?P<pid>\d+)\)\s*(?:\((?P<sig>SIG\w+)\))?")
#: what torchrun and mp.spawn raise when a rank failed
_LAUNCHER_ERRORS = ("ChildFailedError", "ProcessRaisedException", "ProcessExitedException")
_RANK_IN_LINE = re.compile(r"\[(?:PG [^\]]*?)?Rank (?P<rank>\d+)\]")
_RULE_LINE = re.compile(r"^(?:={3,}|-{3,})$")
#: the most ranks read apart (a larger job's lines beyond these are read as one stream)
MAX_RANKS = 1024
_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):\s*$")
_ORIGINAL = re.compile(r"^\s*Original Traceback \(most recent call last\):\s*$")
_FRAME = re.compile(r'^\s+File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.*))?')
_EXC = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|"
                  r"error|Iteration|Fault|Abort|Killed)?)(?::\s?(?P<msg>.*))?$")
_CAUSE = ("The above exception was the direct cause of the following exception:",
          "During handling of the above exception, another exception occurred:")
_WORKER = re.compile(r"Caught \w+ in (DataLoader worker process \d+|DataLoader worker thread \d+|"
                     r"pin memory thread for device \d+)")
#: Python 3.11+ exception notes printed under the message, unindented (3.14 pickle notes)
_NOTE = re.compile(r"^when serializing ")
_WARNING = re.compile(r"(?:^|:\s)(?P<type>\w*Warning): (?P<msg>.*)$")
#: pytest's short summary: "FAILED tests/test_x.py::test_y - AttributeError: Can't pickle ..."
_PYTEST_FAILED = re.compile(r"^FAILED \S+ - (?P<exc>[A-Za-z_][\w.]*(?:Error|Exception): .*)$")
#: pickling errors: a DataLoader's when the log shows torch, even without its frames
_PICKLING = re.compile(r"Can't pickle|Can't get (?:local object|attribute)|cannot pickle")
#: Lightning prints its warnings without their category: "path.py:105: Your ..."
_BARE_WARNING = re.compile(r"^\S+\.py:\d+: (?P<type>)(?P<msg>.*\bIterableDataset\b.*)$")
_TOKENIZERS = "huggingface/tokenizers: The current process just got forked"
_FAULT_START = re.compile(r"^(Fatal Python error: .*|Current thread 0x[0-9a-f]+ .*|"
                          r"Thread 0x[0-9a-f]+ .*|Timeout \(\d+:\d\d:\d\d(?:\.\d+)?\)!)$")
#: py-spy dump: "Process 4821: python train.py", "Thread 4821 (idle): "MainThread"", then
#: "    func (path:line)" frames, most recent call first (locals and native frames skipped)
_PYSPY_PROCESS = re.compile(r"^Process (?P<pid>\d+): (?P<cmd>.*)$")
_PYSPY_THREAD = re.compile(r'^Thread (?P<id>0x[0-9A-Fa-f]+|\d+) \((?P<state>[\w+]+)\)'
                           r'(?:: "(?P<name>.*)")?\s*$')
_PYSPY_FRAME = re.compile(r"^ {4}(?P<func>\S[^()]*?) \((?P<path>[^()]+?):(?P<line>\d+)\)\s*$")
_PYSPY_NATIVE = re.compile(r"^ {4}(?P<func>[A-Za-z_]\S*) \((?P<lib>[^():\s]+)\)\s*$")
#: pytest's report: a failure's header, its frames' locations and its "E   " lines
_PYTEST_HEAD = re.compile(r"^_{3,} \S.* _{3,}$")
_PYTEST_END = re.compile(r"^(={3,}.*|-{3,} Captured .*)$")
_PYTEST_SECTION = re.compile(r"^={3,} (?:FAILURES|ERRORS) ={3,}$")
_PYTEST_LOC = re.compile(r"^(?P<path>(?:[A-Za-z]:)?[^:\s][^:]*?\.pyw?):(?P<line>\d+):"
                         r"(?: in (?P<func>\S+)| ?\w*)\s*$")
_FAULT_FRAME = re.compile(r'^\s+File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<func>.*)$')
#: who prints the next traceback: multiprocessing's and threading's own headers
_PROCESS_HEAD = re.compile(r"^Process (?P<name>\w+Process-[\d:]+|Process-[\d:]+):$")
_THREAD_HEAD = re.compile(r"^Exception in thread (?P<name>.+?):$")
_IGNORED_HEAD = re.compile(r"^Exception ignored in: ")
#: single lines the diagnosis rules read, wherever they appear: these, and the lines each
#: cause's record lists (``log_lines``)
_NOTABLE = re.compile("(%s)" % "|".join(
    (r"ERROR: Unexpected .* encountered in worker", r"is killed by signal",
     r"exited unexpectedly", r"core dumped", r"WinError", r"Fatal Python error")
    + DISTRIBUTED_LINES
    + tuple(line for rule in RULES.values() for line in rule.texts("log_lines"))))
#: a cheap first look: a line with none of these can only carry hints or noise.  Every
#: line the parser acts on outside a traceback holds one (a traceback's own lines are
#: read whatever they hold).  Nearly all start with a capital letter or a rare sign:
#: the regex engine then skips straight to those characters, so one search over a
#: whole chunk costs less than a find per word. These, and each cause's record's
#: ``log_keys``.
_KEYS = ("Traceback", "Error", "ERROR", "Warning", "Exception", "Killed", "Fatal", "Fault",
         "Process", "DataLoader", "The above exception", "During handling", "Current thread",
         "Thread ", "huggingface", "(core dumped)", "Timeout (", "FAILURES", "FAILED ",
         "`IterableDataset`", "Root Cause (first observed failure)", "Failures:") + tuple(
             key for rule in RULES.values() for key in rule.texts("log_keys"))
_KEYS += ("Sending process", "(exitcode", "Terminating process", "Received Signals",
          "Watchdog", "NCCL", "Connection closed", "Read error", "srun: error",
          "slurmstepd: error")
_KEY_RE = re.compile("|".join(re.escape(key) for key in _KEYS))


def _interesting(text):
    return _KEY_RE.search(text) is not None


#: IPython / Jupyter traceback header: a rule of dashes, then "Type   Traceback (...)"
_IPY_RULE = re.compile(r"^-{20,}\s*$")
_IPY_HEAD = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)\s{2,}Traceback \(most recent call last\)")
_IPY_CELL = re.compile(r"^(?:Cell In ?\[(?P<cell>\d*)\], line (?P<line>\d+)"
                       r"|Input In ?\[(?P<cell2>\d*)\],? in .*?line:? (?P<line2>\d+)"
                       r"|(?P<ipi><ipython-input-[^>]+>) in (?P<func0>.*))")
_IPY_FILE = re.compile(r"^(?:File )?(?P<path>(?:~|[A-Za-z]:\\|/)[^\s:]*?\.py)"
                       r"(?::(?P<line>\d+))?(?:,)? in (?P<func>[^\s(]+)")
_IPY_ARROW = re.compile(r"^-*> ?(?P<line>\d+)")

#: host hints: which OS, Python and torch a log came from
_HINT_OS = re.compile(
    r"(?P<Windows>(?:^|[\s\"'(])[A-Za-z]:\\|popen_spawn_win32|\[WinError \d+\])"
    r"|(?P<macOS>/Users/|/opt/homebrew/|Python\.framework|/Library/|darwin)"
    r"|(?P<Linux>/home/|/usr/lib/python|/usr/local/lib/python|/opt/conda/|/root/|"
    r"dist-packages|/dev/shm|popen_fork\.py|popen_forkserver\.py)")
_OS_MARKERS = (":\\", "popen_spawn_win32", "[WinError", "/Users/", "/opt/homebrew/",
               "Python.framework", "/Library/", "darwin", "/home/", "/usr/lib/python",
               "/usr/local/lib/python", "/opt/conda/", "/root/", "dist-packages", "/dev/shm",
               "popen_fork.py", "popen_forkserver.py")
_QUIET_OS_MARKERS = (":\\", "/home/", "/Users/")
_HINT_PYTHON = re.compile(r"(?:[\\/]python(?P<a>3\.\d+)[\\/]|[\\/]Python(?P<b>3)(?P<c>\d+)[\\/]|"
                          r"python@(?P<d>3\.\d+)|^Python (?P<e>3\.\d+\.\d+)|"
                          r"Python version: (?P<f>3\.\d+\.\d+))", re.M)
_HINT_TORCH = re.compile(r"(?i)(?:^|[\s(])(?:torch|pytorch)(?:==| version:? | |-)"
                         r"v?(?P<v>\d+\.\d+(?:\.\d+)?"
                         r"(?:[+a-z0-9.]*)?)\b")
_HINT_METHOD = (("popen_spawn_win32", "spawn"), ("popen_spawn_posix", "spawn"),
                ("SpawnProcess", "spawn"), ("popen_forkserver", "forkserver"),
                ("ForkServerProcess", "forkserver"), ("popen_fork.py", "fork"),
                ("ForkProcess", "fork"))
#: what a DataLoader worker failure leaves in a traceback or line
_DATALOADER = re.compile(r"torch[\\/]utils[\\/]data|DataLoader|dataloader|_worker_loop|"
                         r"encountered in worker|pin memory thread|_pin_memory_loop|"
                         r"torch_shm|</torch_|sharing strategy|torch[\\/]lib[\\/]|"
                         r"torch[\\/]multiprocessing")
_WORKER_SIGNAL = re.compile(r"DataLoader worker \(pid (?P<pid>\d+)\) is killed by signal: "
                            r"(?P<sig>[^.]+)\.")
_WORKER_CODE = re.compile(r"DataLoader worker \(pid (?P<pid>\d+)\) exited unexpectedly "
                          r"with exit code (?P<code>-?\d+)")

MAX_KEPT = 2000        # notable lines, warnings, exceptions kept; the rest are counted
MAX_BLOCK = 4000       # lines of one traceback kept (the head and the end survive)
MAX_LINE = 64 * 1024   # characters of one line looked at


def _clean_one(line):
    """(the line without its prefixes, the rank its prefix names or None, its time
    (:func:`when`) or None)."""
    if "\x00" in line:
        line = line.replace("\x00", "")
    rank = time = None
    for _ in range(2):  # torchrun puts the rank prefix after the timestamp too
        match = _PREFIX.match(line)
        if not match:
            break
        line = line[match.end():]
        if match["rank"] or match["label"]:
            rank = int(match["rank"] or match["label"])
        elif match["iso"]:
            time = when(match["iso"])
    return line, rank, time


_GLOG_TIME = re.compile(r"^\[?[IWEF](?P<md>\d{4}) (?P<hms>\d\d:\d\d:\d\d(?:\.\d+)?) ")


def when(text):
    """A time the log prints, comparable with another as text: ``MM-DD HH:MM:SS.fff``
    from an ISO or logging-module stamp (``2026-12-07 12:03:57,331``), the elastic
    summary's (``2026-12-07_12:03:57``) or glog's (``E1207 12:03:57.620000``, the
    launcher's and NCCL's lines); None for anything else."""
    glog = _GLOG_TIME.match(text)
    if glog:
        return "%s-%s %s" % (glog["md"][:2], glog["md"][2:], glog["hms"])
    if len(text) >= 19 and text[4] == "-" and text[10] in " T_":
        return "%s %s" % (text[5:10], text[11:].replace(",", ".").rstrip("Z"))
    return None


def chronological(times):
    """A sort key for times of :func:`when` (``MM-DD HH:MM:SS``, no year) that puts a
    January after a December among ``times``: a job that ran over New Year."""
    months = {t[:2] for t in times if t}
    over_new_year = "12" in months and "01" in months

    def key(time):
        time = time or ""
        return ("1" if over_new_year and time[:2] in ("01", "02", "03") else "0") + time
    return key


def clean_parts(raw):
    """One physical log line -> the lines as the program printed them: no colour,
    no NUL bytes, no rank or timestamp prefix, each carriage-return rewrite its own
    line, a traceback glued to the end of a progress bar split off."""
    return [part[0] for part in _ranked_parts(raw)]


def _ranked_parts(raw):
    """:func:`clean_parts`, each line with the rank and the time its prefixes name."""
    if len(raw) > MAX_LINE:
        raw = raw[:MAX_LINE]
    if "\x1b" in raw:
        raw = _ANSI.sub("", raw)
    raw = raw.rstrip("\r\n")
    parts = raw.split("\r") if "\r" in raw else [raw]
    out = []
    for part in parts:
        if not part.strip() and len(parts) > 1:
            continue
        part, rank, time = _clean_one(part)
        at = part.find(_TB_TEXT)
        if at > 0 and part[:at].strip() and not part[:at].rstrip().endswith((":", "Original")):
            out.append((part[:at], rank, time))
            part = part[at:]
        out.append((part, rank, time))
    return out


def clean(line):
    """The last line of what :func:`clean_parts` finds: what stayed on screen."""
    parts = clean_parts(line)
    return parts[-1] if parts else ""


class LogParser:
    """Feed lines with :meth:`feed`, then :meth:`close`, then read :attr:`exceptions`,
    :attr:`lines`, :attr:`warnings`, :attr:`stacks` and :attr:`hints`; for a log,
    :meth:`crashes` cuts the exceptions and lines into separate crashes."""

    def __init__(self):
        self.exceptions = []   # the last exception of each printed chain
        self.lines = []
        self.warnings = []
        self.stacks = []
        self.hints = {}        # os, os_from, python, torch, start_method, ...
        self.lineno = 0        # the physical log line being read (1-based)
        self.torch_seen = False
        self.dropped = 0       # what went past the caps, counted
        self.ignored = 0       # "Exception ignored in" tracebacks (noise at shutdown)
        self._exc_at = []      # log line where each of self.exceptions started
        self._line_at = []     # log line of each of self.lines
        self._pending = []     # lines of the block being read
        self._start = 0
        self._state = None     # None | "traceback" | "ipython" | "fault"
        self._context = None   # the exception the next traceback was raised from
        self._context_at = 0
        self._chained = False
        self._phase = None
        self._who = None       # the process/thread header seen just before a traceback
        self._ipy_type = None
        self._pytest = None    # a pytest failure being read: [frames, E lines]
        self._pytest_section = False  # inside pytest's FAILURES: every line is read
        self.rank = None       # the rank whose lines this parser reads (a rank's parser)
        self._ranks = {}       # rank -> the parser of the lines with that rank's prefix
        self.ranks_seen = set()
        self._line_rank = []   # the rank each of self.lines came from (None: no rank)
        self._line_time = []   # the time each of self.lines was printed at, or None
        self._time = None      # the time of the line being read (its prefix's), or None
        self._start_time = None
        self._spawn_rank = None  # inside mp.spawn's "-- Process N terminated with ..."
        self._elastic = None   # the elastic agent's error summary being read

    # -- input -------------------------------------------------------------
    def feed(self, raw):
        self.lineno += 1
        if not self.torch_seen and "torch" in raw:
            self.torch_seen = True
        if "\r" in raw and self._state is None and not _interesting(raw):
            # a progress bar rewritten in place: only what stayed on screen matters
            raw = raw.rstrip("\r\n").rsplit("\r", 1)[-1]
        head = raw[:1]
        label = head == " " and raw[1:2].isdigit()  # srun pads its labels: " 3: "
        if ("\r" not in raw and "\x1b" not in raw and "\x00" not in raw and head != "["
                and not head.isdigit() and not label and len(raw) <= MAX_LINE
                and self._pytest is None and raw.find(_TB_TEXT, 1) < 0):
            self._feed_line(raw.rstrip("\n"))  # nothing to clean: the common case
            return
        for line, rank, time in _ranked_parts(raw):
            if rank is None or self.rank is not None:
                self._time = time or self._time
                self._feed_line(line)
                continue
            if "rank_prefix" not in self.hints and ("[rank" in raw[:80]
                                                    or "[default" in raw[:80]):
                self.hints["rank_prefix"] = True  # torchrun's, not a label srun may add
            self._rank_parser(rank).feed_ranked(line, self.lineno, time)

    def _rank_parser(self, rank):
        """The parser of one rank's lines: ranks print at once, their lines interleave,
        and each rank's tracebacks are read on their own."""
        found = self._ranks.get(rank)
        if found is None:
            if len(self._ranks) >= MAX_RANKS:
                return self
            found = self._ranks[rank] = LogParser()
            found.rank = rank
            self.ranks_seen.add(rank)
        return found

    def feed_ranked(self, line, lineno, time=None):
        """A line of this rank (its prefix taken off), at the log's line ``lineno``."""
        self.lineno = lineno
        self._time = time or self._time
        if not self.torch_seen and "torch" in line:
            self.torch_seen = True
        self._feed_line(line)

    def _idle(self):
        """No block open here nor in any rank's parser: quiet lines may be skipped."""
        return (self._state is None and not self._chained and self._who is None
                and self._pytest is None and not self._pytest_section
                and all(p._idle() for p in self._ranks.values()))

    def feed_block(self, text):
        """Several lines at once (joined by newlines): while no block is open, the lines
        before the next one that holds any key word are skipped in one step, with only
        the host hints looked for in them, so a long quiet log costs one regex search
        per quiet stretch rather than a Python call per line."""
        pos = 0
        size = len(text)
        while pos <= size:
            if self._idle():
                match = _KEY_RE.search(text, pos)
                hit = match.start() if match else size
                start = text.rfind("\n", pos, hit) + 1 if hit < size else size + 1
                if start > pos:
                    self._skip(text[pos:start])
                    pos = start
                    if pos > size:
                        return
            end = text.find("\n", pos)
            if end < 0:
                end = size
            self.feed(text[pos:end])
            pos = end + 1

    def _skip(self, text):
        """Quiet lines, not fed one by one: count them, and look for host hints."""
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        self.lineno += lines
        if not self.torch_seen and "torch" in text:
            self.torch_seen = True
        if text.strip():
            self._context = None
        if "os" not in self.hints or "python" not in self.hints or "torch" not in self.hints:
            # quiet lines: the version lines and the commonest paths only (every marker
            # on every quiet byte would cost more than the rest of the parse)
            self._hint(text, _QUIET_OS_MARKERS)

    def _feed_line(self, line):
        if self._pytest is not None:
            self._pytest_line(line)
        elif self._state == "traceback":
            self._traceback_line(line)
        elif self._state == "ipython":
            self._ipython_line(line)
        elif self._state == "fault":
            self._fault_line(line)
        elif self._state == "pyspy":
            self._pyspy_line(line)
        elif self._state == "elastic":
            self._elastic_line(line)
        else:
            self._free_line(line)

    def feed_text(self, text):
        for raw in text.splitlines():
            self.feed(raw)
        return self.close()

    def close(self):
        if self._state == "elastic":
            self._end_elastic()
        if self._state in ("traceback", "ipython"):
            # a log may end right after an exception's message; anywhere else it was cut
            cut = self._state == "ipython" or self._phase != "message"
            if cut:
                self.hints["truncated"] = True
            self._finish_traceback(cut=cut)
        elif self._state in ("fault", "pyspy"):
            self._finish_fault()
        if self._pytest is not None:
            self._finish_pytest()
        self._merge_ranks()
        return self

    def _merge_ranks(self):
        """Each rank's findings into this parser's, in log order, each marked with its
        rank (its exceptions' ``rank``, its lines' in ``_line_rank``)."""
        if not self._ranks:
            return
        excs = list(zip(self._exc_at, range(len(self._exc_at)), self.exceptions))
        lines = list(zip(self._line_at, range(len(self._line_at)), self.lines,
                         self._line_rank, self._line_time))
        order = len(excs) + len(lines)
        for rank in sorted(self._ranks):
            part = self._ranks[rank]
            part.close()
            excs += [(at, order + i, exc) for i, (at, exc)
                     in enumerate(zip(part._exc_at, part.exceptions))]
            lines += [(at, order + i, *kept) for i, (at, *kept) in enumerate(
                zip(part._line_at, part.lines, part._line_rank, part._line_time))]
            order += len(part.exceptions) + len(part.lines)
            for text in part.warnings:
                self._warn(text)
            self.stacks.extend(part.stacks[:max(0, MAX_KEPT - len(self.stacks))])
            for key, value in part.hints.items():
                if key == "worker_exits":
                    for record in value:
                        self._worker_hint(record)
                else:
                    self.hints.setdefault(key, value)
            self.dropped += part.dropped
            self.ignored += part.ignored
            self.torch_seen = self.torch_seen or part.torch_seen
        excs.sort(key=lambda e: e[:2])
        lines.sort(key=lambda e: e[:2])
        self._exc_at = [e[0] for e in excs][:MAX_KEPT]
        self.exceptions = [e[2] for e in excs][:MAX_KEPT]
        self._line_at = [e[0] for e in lines][:MAX_KEPT]
        self.lines = [e[2] for e in lines][:MAX_KEPT]
        self._line_rank = [e[3] for e in lines][:MAX_KEPT]
        self._line_time = [e[4] for e in lines][:MAX_KEPT]
        self._ranks = {}
        self.hints["ranks"] = sorted(self.ranks_seen)
        if len(self.ranks_seen) > 1 or self.hints.get("rank_prefix"):
            self.hints["distributed"] = True

    # -- outside any block ---------------------------------------------------
    def _free_line(self, line):
        stripped = line.strip()
        if not stripped:
            return
        if stripped.startswith(_TB_TEXT) and _TRACEBACK.match(line):
            self._begin("traceback", [_TB_TEXT])
            self._phase = "frames"
            return
        if _IPY_RULE.match(stripped):
            return
        if "Traceback (most recent call last)" in stripped:
            head = _IPY_HEAD.match(stripped)
            if head:
                self._begin("ipython", [_TB_TEXT])
                self._ipy_type = head["type"].rsplit(".", 1)[-1]
                return
        if stripped in _CAUSE:
            self._chained = True
            return
        spawned = _SPAWN_ERROR.match(stripped)
        if spawned:  # mp.spawn: the next traceback is the rank's own
            self._spawn_rank = int(spawned["rank"])
            self.hints["distributed"] = True
            return
        self._spawn_rank = None
        if stripped in _ELASTIC_SECTIONS and self.rank is None:  # the summary pasted alone
            self._begin_elastic()
            self._elastic_line(line)
            return
        if not self._chained:
            self._context = None
        self._who = None  # a process or thread header counts only right before its traceback
        if self._pytest_section and _PYTEST_HEAD.match(stripped):
            self._pytest = [[], []]
            return
        if not _interesting(stripped):
            self._hint(stripped)
            return
        spy = _PYSPY_PROCESS.match(stripped)
        if spy or _PYSPY_THREAD.match(stripped):
            self._begin("pyspy", ["py-spy dump of process %s (%s)" % (spy["pid"], spy["cmd"])]
                        if spy else [])
            if not spy:
                self._pyspy_line(line)
            return
        if _FAULT_START.match(stripped):
            self._begin("fault", [stripped])
            return
        if _PYTEST_SECTION.match(stripped):
            self._pytest_section = True
            return
        if _PYTEST_HEAD.match(stripped) or line.startswith("E   "):
            self._pytest = [[], []]  # a failure's header, or its E lines pasted alone
            if not _PYTEST_HEAD.match(stripped):
                self._pytest_line(line)
            return
        head = _PROCESS_HEAD.match(stripped)
        if head:
            self._who = "child"
            return
        head = _THREAD_HEAD.match(stripped)
        if head:
            name = head["name"]
            self._who = "pin memory thread" if "pin_memory" in name else "thread " + name
            return
        if _IGNORED_HEAD.match(stripped):
            self._who = "ignored"
            return
        self._hint(stripped)
        failed = _PYTEST_FAILED.match(stripped)
        if failed and not any(e.last_line() == failed["exc"] for e in self.exceptions[-8:]):
            # only the summary line: the report's own traceback was left out (--tb=no)
            self._feed_line(_TB_TEXT)
            self._feed_line(failed["exc"])
            self._feed_line("")
            return
        if stripped.startswith(_TOKENIZERS):
            self._warn("TokenizersWarning: " + stripped.split(": ", 1)[1])
            return
        warning = _WARNING.search(stripped) or _BARE_WARNING.match(stripped)
        if warning:
            self._warn("%s: %s" % (warning["type"] or "UserWarning", warning["msg"]))
        elif _NOTABLE.search(stripped):
            self._keep_line(stripped, self.lineno)

    def _keep_line(self, text, at):
        if len(self.lines) < MAX_KEPT:
            self.lines.append(text)
            self._line_at.append(at)
            rank = self.rank
            if rank is None:  # NCCL's own lines name it: "[Rank 3] Watchdog caught ..."
                named = _RANK_IN_LINE.search(text[:200])
                rank = int(named["rank"]) if named else None
            self._line_rank.append(rank)
            self._line_time.append(when(text) or self._time)
        else:
            self.dropped += 1

    def _warn(self, text):
        if text in self.warnings[-20:]:
            return  # the same warning every epoch
        if len(self.warnings) < MAX_KEPT:
            self.warnings.append(text)
        else:
            self.dropped += 1

    def _begin(self, state, pending):
        self._state = state
        self._pending = pending
        self._start = self.lineno
        self._start_time = self._time

    # -- the elastic agent's error summary (ChildFailedError) ---------------------------
    def _begin_elastic(self):
        self._begin("elastic", [])
        self._elastic = {"section": None, "entry": None, "tb": None}
        self.hints["distributed"] = True

    def _elastic_line(self, line):
        """One line of the summary: its sections, each failure's ``[N]:`` and its fields;
        a field ``traceback`` (the rank's error file, ``@record``) holds a whole
        traceback, indented by two spaces."""
        table = self._elastic
        stripped = line.strip()
        if table["tb"] is not None:
            if line.startswith("  ") or not stripped:
                table["tb"].append((line[2:], self.lineno))
                return
            self._end_entry()
        if _RULE_LINE.match(stripped):
            self._end_entry()
            if stripped.startswith("=") and table["section"] == "root":
                self._end_elastic()
            return
        if stripped in _ELASTIC_SECTIONS:
            self._end_entry()
            table["section"] = _ELASTIC_SECTIONS[stripped]
            return
        entry = _ELASTIC_ENTRY.match(stripped)
        if entry and table["section"]:
            self._end_entry()
            table["entry"] = {"root": table["section"] == "root", "line": self.lineno}
            return
        field = _ELASTIC_FIELD.match(line)
        if field and table["entry"] is not None:
            self._elastic_field(table, field["key"], field["value"].strip())
            return
        if not stripped or stripped == "<NO_OTHER_FAILURES>" or (
                table["section"] is None and stripped.endswith(" FAILED")):
            return
        self._end_elastic()
        self._feed_line(line)

    def _elastic_field(self, table, key, value):
        entry = table["entry"]
        if key == "rank":
            found = _ELASTIC_RANK.match(value)
            if found:
                entry["rank"], entry["local_rank"] = int(found["rank"]), int(found["local"])
        elif key == "exitcode":
            found = _ELASTIC_EXIT.match(value)
            if found:
                entry["exitcode"], entry["pid"] = int(found["code"]), int(found["pid"])
                entry["signal"] = found["sig"]
        elif key in ("traceback", "msg"):
            entry["traceback"] = value.strip('"')[:300]
            if value.startswith(_TB_TEXT):
                table["tb"] = [(_TB_TEXT, self.lineno)]
        else:
            entry[key] = value[:200]

    def _end_entry(self):
        """A failure of the summary read: kept in ``hints["elastic"]``; its traceback,
        where the rank's own output is not in the log, read as that rank's."""
        table = self._elastic
        entry, lines = table["entry"], table["tb"]
        table["entry"], table["tb"] = None, None
        if entry is None:
            return
        found = self.hints.setdefault("elastic", [])
        if len(found) < 64:
            found.append(entry)
        rank = entry.get("rank")
        if not lines or rank is None:
            return
        part = self._rank_parser(rank)
        if (part is self or part.exceptions or part._state is not None
                or any(e.rank == rank for e in self.exceptions)):
            return  # the rank printed it in the log already
        for text, at in lines:
            part.feed_ranked(text, at, when(entry.get("time", "")))
        if part._state == "traceback":
            part._finish_traceback()

    def _end_elastic(self):
        self._end_entry()
        self._state = None
        self._elastic = None

    def _append(self, line):
        if len(self._pending) < MAX_BLOCK:
            self._pending.append(line)
        elif len(self._pending) == MAX_BLOCK:
            self._pending.append("    ...")
        else:
            # keep the end: drop the oldest frame line after the cut marker
            del self._pending[MAX_BLOCK + 1]
            self._pending.append(line)

    # -- a traceback ---------------------------------------------------------
    def _traceback_line(self, line):
        """Frames, then the exception line, then its message: indented lines, exception
        notes, and for a worker's re-raised exception the whole ``Original Traceback``
        section (torch 1.x: a whole traceback as the message)."""
        stripped = line.strip()
        indented = line.startswith((" ", "\t"))
        if self._phase == "frames":
            if indented or not stripped:
                self._append(line)
                return
            if _TRACEBACK.match(line):  # a traceback cut short, a new one starts
                self._finish_traceback(cut=True)
                self._free_line(line)
                return
            self._append(line)
            if _WORKER.search(line):
                self._phase = "wrapper"
            elif stripped.endswith(": " + _TB_TEXT) or stripped.endswith(":" + _TB_TEXT):
                self._phase = "original"   # torch 1.0/1.1: the worker's traceback as message
            else:
                self._phase = "message"
            return
        if self._phase == "wrapper":
            if _ORIGINAL.match(line):
                self._append(line)
                self._phase = "original"
                return
        if self._phase == "original":
            if indented or not stripped:
                self._append(line)
                return
            if _TRACEBACK.match(line):
                self._finish_traceback(cut=True)
                self._free_line(line)
                return
            self._append(line)
            self._phase = "message"
            return
        # the message: indented lines, notes and blank lines between them belong to it
        if (indented and stripped) or _NOTE.match(stripped):
            self._append(line)
            return
        if not stripped:
            self._append(line)
            return
        self._finish_traceback()
        self._feed_line(line)

    def _finish_traceback(self, cut=False):
        exc = _parse_block(self._pending, cut)
        self._state = None
        self._pending = []
        who, self._who = self._who, None
        if exc is None:
            if cut:
                self.hints["truncated"] = True
            self._chained = False
            return
        if who == "ignored":
            self.ignored += 1
            self._chained = False
            return
        if exc.process == "main" and any(f.func == "_feed" and "queues" in f.path
                                         for f in exc.frames[-3:]):
            # multiprocessing.Queue's feeder thread pickles what a worker put: a sample
            # that cannot be pickled fails there, and the batch never arrives
            exc.process = "queue feeder thread"
        if who and exc.process == "main":
            exc.process = who
            if who.startswith("thread") and any(f.func == "_pin_memory_loop" for f in exc.frames):
                exc.process = "pin memory thread"  # Python < 3.10 names no target
        exc.rank = self.rank if self.rank is not None else self._spawn_rank
        exc.time = self._start_time
        self._hint_exc(exc)
        if exc.type.endswith(_LAUNCHER_ERRORS):
            self.hints["distributed"] = True
        if exc.type.endswith("ChildFailedError") and self.rank is None:
            self._begin_elastic()  # the agent's summary follows the exception's line
        if self._chained and self._context is not None:
            exc.context = self._context
            # the earlier exception is no longer the last of its chain
            exc.time = self._context.time or exc.time  # the chain began with its first
            if self.exceptions and self.exceptions[-1] is self._context:
                self.exceptions.pop()
                self._start = self._exc_at.pop()
        self._chained = False
        self._context = exc
        if len(self.exceptions) < MAX_KEPT:
            self.exceptions.append(exc)
            self._exc_at.append(self._start)
        else:
            self.dropped += 1

    # -- an IPython / Jupyter traceback ----------------------------------------
    def _ipython_line(self, line):
        """Turn IPython's frames into Python's, then read the end as a traceback."""
        stripped = line.strip()
        if not stripped:
            return
        cell = _IPY_CELL.match(stripped)
        if cell:
            if cell["ipi"]:
                self._append('  File "%s", line 0, in %s' % (cell["ipi"], cell["func0"]))
            else:
                number = cell["line"] or cell["line2"]
                self._append('  File "<cell In[%s]>", line %s, in <cell>' % (
                    cell["cell"] or cell["cell2"] or "", number))
            return
        found = _IPY_FILE.match(stripped)
        if found and not line.startswith(" "):
            self._append('  File "%s", line %s, in %s' % (
                found["path"], found["line"] or 0, found["func"]))
            return
        arrow = _IPY_ARROW.match(stripped)
        if arrow:
            last = self._pending[-1] if self._pending else ""
            if ", line 0, in " in last:  # old IPython: the line comes from the arrow
                self._pending[-1] = last.replace(", line 0, in ", ", line %s, in " % arrow["line"])
            return
        if line.startswith((" ", "\t")) or re.match(r"^\d+ ", stripped):
            return  # code context lines
        match = _EXC.match(stripped)
        if match and (match["type"].rsplit(".", 1)[-1] == self._ipy_type
                      or match["msg"] is not None):
            self._state = "traceback"
            self._phase = "frames"
            self._traceback_line(line)
            return
        # something else: the cell output went on; the traceback was cut
        self._finish_traceback(cut=True)
        self._free_line(line)

    # -- a faulthandler dump -------------------------------------------------
    def _fault_line(self, line):
        stripped = line.strip()
        if (_FAULT_FRAME.match(line) or _FAULT_START.match(stripped)
                or stripped.startswith(("Extension modules:", "<no Python frame>",
                                        "Stack (most recent call first):"))):
            self._append(line)
            return
        if not stripped:
            self._append("")
            return
        self._finish_fault()
        self._free_line(line)

    # -- a py-spy dump: read into faulthandler's form, so one reader serves both ----------
    def _pyspy_line(self, line):
        stripped = line.strip()
        thread = _PYSPY_THREAD.match(stripped)
        if thread:
            self._append('Thread %s (%s)%s (most recent call first):' % (
                thread["id"], thread["state"],
                ' "%s"' % thread["name"] if thread["name"] is not None else ""))
            return
        frame = _PYSPY_FRAME.match(line)
        if frame:
            self._append('  File "%s", line %s in %s' % (
                frame["path"], frame["line"], frame["func"]))
            return
        native = _PYSPY_NATIVE.match(line)
        if native:  # --native: "    cudaStreamSynchronize (libcudart.so.12)"
            self._append('  File "<native %s>", line 0 in %s' % (native["lib"], native["func"]))
            return
        if not stripped or line.startswith("    ") or stripped.startswith("Python v"):
            return  # locals, the interpreter's version, blank lines
        self._finish_fault()
        self._free_line(line)

    # -- a pytest failure: its entries read back into a Python traceback ---------------
    def _pytest_line(self, line):
        stripped = line.strip()
        if _PYTEST_HEAD.match(stripped) or _PYTEST_END.match(stripped):
            self._finish_pytest()
            if _PYTEST_HEAD.match(stripped):
                self._pytest = [[], []]
            elif not _PYTEST_SECTION.match(stripped):
                self._pytest_section = False
            return
        if stripped in _CAUSE:
            self._finish_pytest()
            self._feed_line(stripped)
            self._pytest = [[], []]
            return
        if _TRACEBACK.match(line):  # --tb=native: Python's own traceback
            self._finish_pytest()
            self._free_line(line)
            return
        frames, errors = self._pytest
        if line.startswith("E ") or line == "E":
            if len(errors) < MAX_BLOCK:
                errors.append(line[1:])
            return
        where = _PYTEST_LOC.match(stripped)
        if where and len(frames) < MAX_BLOCK:
            frames.append('  File "%s", line %s, in %s' % (
                where["path"], where["line"], where["func"] or "?"))

    def _finish_pytest(self):
        frames, errors = self._pytest
        self._pytest = None
        indent = min((len(e) - len(e.lstrip()) for e in errors if e.strip()), default=0)
        errors = [e[indent:] for e in errors]  # "E       " aligns them with the source
        while errors and not errors[0].strip():
            errors.pop(0)
        if not errors or not _EXC.match(errors[0].strip()):
            return
        for text in [_TB_TEXT] + frames + errors + [""]:
            self._feed_line(text)

    def _finish_fault(self):
        text = "\n".join(self._pending).strip()
        self._state = None
        self._pending = []
        if text and len(self.stacks) < MAX_KEPT:
            self.stacks.append(text)
        if text.startswith("Fatal Python error"):
            self._keep_line(text.split("\n", 1)[0], self._start)

    # -- hints -----------------------------------------------------------------
    def _hint(self, text, os_markers=None):
        """Which OS, Python, torch and start method the log shows; each cheap test gates
        its regex, and a hint once found is not looked for again."""
        hints = self.hints
        if "os" not in hints:
            self._os_hint(text, os_markers or _OS_MARKERS)
        if "python" not in hints and "ython" in text:
            found = _HINT_PYTHON.search(text)
            if found:
                if found["b"]:
                    hints["python"] = "3." + found["c"]
                else:
                    hints["python"] = next(v for v in found.groups() if v)
        if "torch" not in hints and "orch" in text:
            found = _HINT_TORCH.search(text)
            if found:
                hints["torch"] = found["v"]
        if "start_method" not in hints and ("popen_" in text or "Process" in text):
            for marker, method in _HINT_METHOD:
                if marker in text:
                    hints["start_method"] = method
                    break

    def _os_hint(self, text, markers):
        """Substring tests first (C speed on a whole block), the regex on one line."""
        pos = 0
        while True:
            first = -1
            for marker in markers:
                at = text.find(marker, pos)
                if at >= 0 and (first < 0 or at < first):
                    first = at
            if first < 0:
                return
            start = text.rfind("\n", 0, first) + 1
            end = text.find("\n", first)
            line = text[start:end if end >= 0 else len(text)]
            found = _HINT_OS.search(line)
            if found:
                self.hints["os"] = found.lastgroup
                at = found.start() + (found.group()[0] in " \t\"'(")  # not the space before
                self.hints["os_from"] = _token(line, at)
                return
            if end < 0:
                return
            pos = end + 1

    def _hint_exc(self, exc):
        for item in (exc, exc.original):
            if item is None:
                continue
            for frame in item.frames:
                self._hint('File "%s"' % frame.path)
        head = exc.message[:300]
        if "WinError" in head:
            self.hints.setdefault("os", "Windows")
            self.hints.setdefault("os_from", exc.last_line()[:120])
        for match in _WORKER_SIGNAL.finditer(exc.message[:2000]):
            self._worker_hint({"pid": int(match["pid"]), "signal": match["sig"].strip()})
        for match in _WORKER_CODE.finditer(exc.message[:2000]):
            self._worker_hint({"pid": int(match["pid"]), "exit_code": int(match["code"])})

    def _worker_hint(self, record):
        found = self.hints.setdefault("worker_exits", [])
        if record not in found and len(found) < 64:
            found.append(record)

    # -- a log that holds several crashes ----------------------------------------
    def crashes(self):
        """The exceptions and lines cut into crashes, in log order: a crash ends with an
        exception the main process printed; what children and workers printed before it
        belongs to it, and so do the symptoms they print just after it (a Windows child's
        ``EOFError: Ran out of input`` once the parent gave up).  Each crash is a dict:
        ``line`` (where it starts), ``exceptions``, ``lines``, ``dataloader`` (whether it
        shows a DataLoader failure at all), ``rank`` (the rank that printed it, or None).
        The ranks of a distributed job are cut apart: a rank's crash holds only its lines."""
        by_rank = {}
        for at, exc in zip(self._exc_at, self.exceptions):
            by_rank.setdefault(exc.rank, []).append((at, 0, exc, exc.time))
        for at, text, rank, time in zip(self._line_at, self.lines, self._line_rank,
                                        self._line_time):
            by_rank.setdefault(rank, []).append((at, 1, text, time))
        found = []
        for rank, events in by_rank.items():
            for crash in self._cut(sorted(events, key=lambda e: (e[0], e[1]))):
                crash["rank"] = rank
                found.append(crash)
        found.sort(key=lambda c: c["line"])
        return found

    def _cut(self, events):
        found = []
        current = None
        for at, kind, item, time in events:
            symptom = _is_symptom(item)
            if current is None:
                if (symptom and found and found[-1]["closed"] and kind == 0
                        and item.process != "main"):
                    found[-1]["exceptions"].append(item)
                    continue
                current = {"line": at, "exceptions": [], "lines": [], "closed": False,
                           "time": None}
                found.append(current)
            current["time"] = current["time"] or time  # when the crash began, if printed
            if kind == 0:
                current["exceptions"].append(item)
                if item.process == "main":
                    current["closed"] = True
                    current = None
            else:
                current["lines"].append(item)
        for crash in found:
            crash["dataloader"] = self._shows_dataloader(crash)
            del crash["closed"]
        return found

    def _shows_dataloader(self, crash):
        for exc in crash["exceptions"]:
            for item in exc.chain():
                for part in (item, item.original):
                    if part is None:
                        continue
                    if _DATALOADER.search(part.type + ": " + part.message[:4000]):
                        return True
                    if self.torch_seen and _PICKLING.search(part.message[:400]):
                        return True
                    if any(_DATALOADER.search(f.path) or f.func == "_worker_loop"
                           for f in part.frames):
                        return True
                # a spawned child's failure, or a worker's queue feeder thread: their own
                # frames never name the DataLoader that started them
                if item.process in ("child", "queue feeder thread") and (
                        self.torch_seen or not _is_symptom(item)):
                    return True
        return any(_DATALOADER.search(text) or "killed by signal" in text
                   for text in crash["lines"])


_SYMPTOMS = re.compile(r"^(EOFError: Ran out of input|BrokenPipeError: \[Errno 32\]|"
                       r"PermissionError: \[WinError 5\]|ConnectionResetError|"
                       r"RuntimeError: DataLoader worker \(pid\(s\) [\d, ]+\) exited unexpectedly)")


def _token(text, at):
    """The word (a path, usually) around position ``at``."""
    start = max(text.rfind(" ", 0, at), text.rfind('"', 0, at), text.rfind("\n", 0, at)) + 1
    ends = [i for i in (text.find(" ", at + 1), text.find('"', at + 1),
                        text.find("\n", at + 1)) if i >= 0]
    return text[start:min(ends) if ends else len(text)].strip("\"'(")[:160]


def _is_symptom(item):
    if isinstance(item, Exc):
        return bool(_SYMPTOMS.match(item.last_line()))
    return False


def _parse_block(lines, cut=False):
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
    original = _original(rest, cut)
    if original is not None:
        worker = _WORKER.search(message)
        original.process = _worker_name(worker.group(1)) if worker else "worker"
        exc.original = original
        if not original.type and worker:  # cut before the original's last line
            original.type = match["type"]
            original.message = "(the log ends before the worker's own error line)"
    elif (match["msg"] or "").startswith("'Traceback (most recent call last):\\n"):
        exc.original = _escaped_original(match["msg"])
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


def _original(rest, cut=False):
    for k, line in enumerate(rest):
        if _ORIGINAL.match(line) or (k == 0 and line.rstrip().endswith(_TB_TEXT)):
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


def _escaped_original(msg):
    """torch 0.4/1.0 re-raised a KeyError with the worker's traceback as its repr."""
    text = msg.strip().strip("'").replace("\\n", "\n").replace("\\'", "'")
    lines = text.split("\n")
    exc = _original(lines)
    if exc is not None:
        exc.process = "worker"
    return exc


def _worker_name(where):
    if where.startswith("DataLoader worker process"):
        return "worker " + where.rsplit(" ", 1)[1]
    if where.startswith("DataLoader worker thread"):
        return "worker thread " + where.rsplit(" ", 1)[1]
    return "pin memory thread"


def _process_of(frames):
    """A traceback that starts in multiprocessing's spawn_main (or the fork server's
    child side, or a Process's own bootstrap) was printed by a child."""
    for frame in frames[:4]:
        path = frame.path.replace("\\", "/")
        if "multiprocessing" not in path:
            continue
        if frame.func in ("spawn_main", "_main", "_serve_one", "_bootstrap") or (
                frame.func == "main" and path.endswith("forkserver.py")):
            return "child"
    return "main"


def parse_text(text):
    return LogParser().feed_text(text)
