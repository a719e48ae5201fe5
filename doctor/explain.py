"""``doctor explain``: a saved log -> the same evidence record, running nothing from it.

The log is streamed in fixed-size chunks (bounded memory whatever its size or its
longest line), decoded as UTF-8, or UTF-16 when it starts with a byte-order mark
(PowerShell's ``2> crash.log`` writes UTF-16), and fed line by line to the parser the
run path uses.  A log can hold several crashes (several runs pasted together, every
rank of a distributed job): each is diagnosed on its own (:func:`log_parts`, through
:func:`doctor.pipeline.diagnosed`), and :func:`diagnose_log` takes the first crash with
a specific cause as the root cause, and says so in its evidence.
"""
import codecs
import copy
import os
import stat

from doctor import distributed
from doctor.diagnose import user_frame
from doctor.distributed import is_generic
from doctor.evidence import Evidence
from doctor.logparse import LogParser
from doctor.named_file import stat_named, unreadable
from doctor.sourcefile import default_roots, read_source
from flake8_dlworker import platforms

CHUNK = 256 * 1024
MAX_LINE = 1024 * 1024   # a "line" longer than this (no newline) is cut, the rest skipped
#: the most of a log that is read: the last MAX_LOG bytes of a larger file, the first
#: MAX_LOG bytes of standard input (a file that grows while it is read stops there too)
MAX_LOG = 256 * 1024 * 1024
_LOG_FLAGS = platforms.UNTRUSTED_READ_FLAGS


class BadLog(Exception):
    """The log cannot be read as text: the CLI prints it on one line, exit 2."""


def open_log(path, stream=None, limit=MAX_LOG):
    """A binary handle on the log; ``-`` is ``stream`` (stdin).

    The file's type is checked before it is opened, and again on the open handle: a FIFO,
    a device or a socket named as the log is refused (opening a FIFO would block)."""
    if path == "-":
        if stream is None:
            raise BadLog("-: no standard input to read")
        return stream
    _check_log_type(path, stat_named(path, BadLog))
    try:
        fd = os.open(path, _LOG_FLAGS)
    except OSError as exc:
        raise BadLog(unreadable(path, exc))
    info = os.fstat(fd)
    try:
        _check_log_type(path, info)
    except BadLog:
        os.close(fd)
        raise
    handle = os.fdopen(fd, "rb")
    if info.st_size > limit:  # a long run's log: its end holds the crash
        handle.seek((info.st_size - limit + 1) // 2 * 2)  # even: UTF-16 stays aligned
    return handle


class Bounded:
    """A handle that gives at most ``limit`` bytes; ``cut`` says that it stopped early."""

    def __init__(self, handle, limit=MAX_LOG):
        self.handle = handle
        self.left = limit
        self.cut = False

    def read(self, size):
        if self.left <= 0:
            self.cut = bool(self.handle.read(1))
            return b""
        chunk = self.handle.read(min(size, self.left))
        self.left -= len(chunk)
        return chunk


def _check_log_type(path, info):
    if stat.S_ISDIR(info.st_mode):
        raise BadLog("%s: is a directory, not a log file" % path)
    if not stat.S_ISREG(info.st_mode):
        raise BadLog("%s: is not a regular file (a FIFO, device or socket); "
                     "pipe it in with - instead" % path)


def iter_blocks(handle, path):
    """The log decoded, streamed as blocks of whole lines (joined by newlines, without
    the last one): the first chunk decides the encoding and whether this is text."""
    decoder = None
    rest = ""
    skipping = False  # inside an over-long line whose head was already given
    while True:
        try:
            chunk = handle.read(CHUNK)
        except OSError as exc:
            raise BadLog(unreadable(path, exc))
        if decoder is None:
            if not chunk:
                return
            encoding = _encoding(chunk)
            if encoding is None:
                raise BadLog("%s: looks like a binary file, not a log" % path)
            decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        text = rest + decoder.decode(chunk, final=not chunk)
        end = text.rfind("\n")
        if end >= 0:
            block, rest = text[:end], text[end + 1:]
            if skipping:
                cut = block.find("\n")
                block = block[cut + 1:] if cut >= 0 else None
                skipping = False
            if block is not None:
                yield block
        else:
            rest = text
        if len(rest) > MAX_LINE:
            # one enormous line (a progress bar rewritten with \r for hours): keep what
            # the last carriage return left, drop the rest up to the next newline
            cut = rest.rfind("\r")
            if not skipping:
                if cut < 0:
                    yield rest[:MAX_LINE]
                else:  # the last whole rewrite before the cut is what the screen showed
                    yield rest[max(0, rest.rfind("\r", 0, cut), cut - MAX_LINE):cut]
            rest = "" if cut < 0 else rest[cut:]
            skipping = cut < 0
        if not chunk:
            if rest and not skipping:
                yield rest
            return


def iter_lines(handle, path):
    """The log's lines, streamed (without their newline)."""
    for block in iter_blocks(handle, path):
        yield from block.split("\n")


def _encoding(chunk):
    """utf-8, utf-16, or None for binary data."""
    if chunk.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if chunk.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    sample = chunk[:8192]
    zeros = sample.count(0)
    if zeros > len(sample) * 0.3:
        # UTF-16 without a byte-order mark: every other byte is NUL, the others are text
        half = len(sample) // 2
        if half > 8:
            for zeros, text, name in ((sample[1::2], sample[0::2], "utf-16-le"),
                                      (sample[0::2], sample[1::2], "utf-16-be")):
                if zeros.count(0) > half * 0.9 and sum(
                        1 for b in text if 32 <= b < 127 or b in (9, 10, 13)) > half * 0.9:
                    return name
        return None
    # control bytes other than whitespace, ESC and the NUL torch writes after ERROR lines
    bad = sum(1 for b in sample if b < 32 and b not in (8, 9, 10, 12, 13, 27, 0))
    if bad > len(sample) * 0.05:
        return None
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # a cut multibyte character at the end of the sample is fine; garbage is not
        if exc.start < len(sample) - 4 and _invalid_share(sample) > 0.1:
            return None
    return "utf-8"


def _invalid_share(sample):
    decoded = sample.decode("utf-8", errors="replace")
    return decoded.count("\ufffd") / max(1, len(decoded))


def _read(path, stdin, limit):
    """One log parsed: (the parser, what was left unread, or None)."""
    handle = open_log(path, stdin, limit)
    skipped = handle.tell() if path != "-" else 0
    reader = Bounded(handle, limit)
    parser = LogParser()
    seen_text = False
    try:
        for block in iter_blocks(reader, path):
            if not seen_text and block.strip(" \t\r\n\x00"):
                seen_text = True
            parser.feed_block(block)
    finally:
        if path != "-":
            handle.close()
    if not seen_text:
        raise BadLog("%s: the log is empty" % path)
    parser.close()
    unread = None
    if skipped:
        unread = "the log is larger than %s: only its last %s were read" % (
            _size(skipped + limit), _size(limit))
    elif reader.cut:
        unread = "only the first %s of the log were read" % _size(limit)
    return parser, unread


def explain(path, stdin=None, start_method="spawn", sources=(), limit=MAX_LOG):
    """The evidence of a log, or of several logs of one job (``path`` a list: one log
    per node or per rank; each crash then names its log as its node)."""
    paths = [path] if isinstance(path, str) else list(path)
    if paths.count("-") > 1:
        raise BadLog("-: standard input can be read once")
    crashes, hints, warnings, stacks, dropped, unread = [], {}, [], [], 0, []
    for name in paths:
        parser, cut = _read(name, stdin, limit)
        found = parser.crashes()
        if len(paths) > 1:
            node = _node_name(name, paths)
            for crash in found:
                crash["node"] = node
            for entry in parser.hints.get("elastic", []):
                entry["node"] = node
        crashes.extend(found)
        for key, value in parser.hints.items():
            if key in ("elastic", "worker_exits", "ranks") and key in hints:
                hints[key] = hints[key] + [v for v in value if v not in hints[key]]
            else:
                hints.setdefault(key, value)
        warnings.extend(w for w in parser.warnings if w not in warnings)
        stacks.extend(parser.stacks)
        dropped += parser.dropped
        if cut:
            unread.append(cut if len(paths) == 1 else "%s: %s" % (name, cut))
    if len(paths) > 1:
        hints["distributed"] = True
    failing = [c for c in crashes if c["dataloader"]]
    ev = Evidence(source="log", target=" ".join(paths), start_method=start_method,
                  outcome="crashed" if crashes else "passed",
                  exceptions=[e for c in failing for e in c["exceptions"]],
                  lines=[t for c in failing for t in c["lines"]],
                  warnings=warnings, stacks=stacks)
    ev.hints = hints
    ev.hints["crashes"] = failing
    ev.hints["other_crashes"] = [c for c in crashes if not c["dataloader"]]
    if dropped:
        ev.hints["dropped"] = dropped
    if unread:
        ev.hints["unread"] = "; ".join(unread)
    ev.host = {key: ev.hints.get(key) for key in ("os", "python", "torch")}
    ev.hints["source_roots"] = default_roots(sources)
    ev.static = _static_for_user_files(ev, start_method)
    return ev


def _node_name(path, paths):
    """A log's node: its file name (its path where two logs share a name)."""
    if path == "-":
        return "stdin"
    name = os.path.basename(path)
    same = [p for p in paths if os.path.basename(p) == name]
    return path if len(same) > 1 else name


def _size(count):
    return "%.0f MB" % (count / 1e6) if count >= 1e6 else "%d bytes" % count


def _static_for_user_files(ev, start_method):
    """The checker on the user's files named in the log, where they may be read here
    (:mod:`doctor.sourcefile`: the log is untrusted, its paths too)."""
    paths = []
    for exc in ev.all_exceptions():
        frame = user_frame(exc)
        if frame is not None and frame.path not in paths:
            paths.append(frame.path)
    found = []
    for path in paths[:8]:
        source = read_source(path, ev.hints["source_roots"])[0]
        if source is None:
            continue
        from doctor.static import static_findings  # the checker loads only when it has work

        found.extend(static_findings(path, start_method, source))
    return found


def _crash_key(crash):
    """The same crash printed again (every rank, every retry) has the same key."""
    return (tuple(e.last_line() for last in crash["exceptions"] for e in last.chain()),
            tuple(crash["lines"]))


def log_parts(ev):
    """The evidence to diagnose for a log: the whole of it when it holds one crash at
    most; else each crash once, then the rest (warnings, static findings) once. A
    distributed job's crash is read with the lines its scheduler and launcher printed
    for the whole job (``slurmstepd: error: Detected 1 oom_kill event``)."""
    crashes = ev.hints.get("crashes") or []
    distributed = ev.hints.get("distributed")
    if len(crashes) <= 1 and not distributed:
        return [ev]
    job = {}
    for crash in ev.hints.get("other_crashes") or [] if distributed else []:
        if crash.get("rank") is None and not crash["exceptions"]:
            job.setdefault(crash.get("node"), []).extend(crash["lines"])
    parts, seen = [], set()
    for crash in crashes:
        key = _crash_key(crash)
        if key not in seen:
            seen.add(key)
            part = copy.copy(ev)
            part.exceptions = crash["exceptions"]
            part.lines = crash["lines"] + job.get(crash.get("node"), [])
            part.warnings = []
            part.static = []
            parts.append(part)
    rest = copy.copy(ev)
    rest.exceptions, rest.lines = [], []
    parts.append(rest)
    return parts


def diagnose_log(ev, found_in_parts):
    """Diagnoses for a log from those of its :func:`log_parts` (in order): each crash on
    its own, the root cause first.

    The root cause is the first crash, in log order, with a specific cause: a later
    crash is a knock-on of it, a repeat (another rank, another epoch), or a later run;
    a crash that left only the generic line is explained by a specific one when the
    log has it.  Later crashes with a different cause follow as further diagnoses."""
    crashes = ev.hints.get("crashes") or []
    if ev.hints.get("distributed"):
        found = distributed.diagnose_job(ev, _per_crash(crashes, found_in_parts),
                                         found_in_parts[-1])
        _say_generic(ev, found)
        return found
    if len(crashes) <= 1:
        found = found_in_parts[0]
        if found and found[0].code == "DLW206":
            ev.outcome = "crashed"  # a hang shown by stacks alone is the run's failure too
        _say_generic(ev, found)
        return found
    per_crash = _per_crash(crashes, found_in_parts)
    specific = [(c, d) for c, d in per_crash if d and not is_generic(d)]
    chosen = specific[0] if specific else per_crash[0]
    found = list(chosen[1])
    where = ", ".join(str(c["line"]) for c in crashes[:5]) + (", ..." if len(crashes) > 5 else "")
    if found:
        found[0].evidence.append(
            "the log holds %s%d crashes (starting at log lines %s); the root cause is taken "
            "from the first one with a specific cause, at line %d" % (
                "at least " if ev.hints.get("dropped") else "", len(crashes), where,
                chosen[0]["line"]))
    codes = {d.code for d in found}
    for crash, diags in specific:
        if crash is chosen[0]:
            continue
        for diag in diags:
            if diag.code not in codes:
                codes.add(diag.code)
                diag.evidence.append("from a later crash in the same log, at line %d"
                                     % crash["line"])
                found.append(diag)
    # warnings and static findings, once, for the whole log
    for diag in found_in_parts[-1]:
        if diag.code not in codes:
            codes.add(diag.code)
            found.append(diag)
    _say_generic(ev, found)
    return found


def _per_crash(crashes, found_in_parts):
    """(crash, its diagnoses) for each crash: a crash printed again shares the first's."""
    seen = {}
    for crash in crashes:
        key = _crash_key(crash)
        if key not in seen:
            seen[key] = found_in_parts[len(seen)]
    return [(crash, seen[_crash_key(crash)]) for crash in crashes]


def _say_generic(ev, found):
    if found and ev.hints.get("truncated"):
        found[0].evidence.append("the log ends in the middle of a traceback: it was cut short")
    if found and ev.hints.get("unread"):
        found[0].evidence.append(ev.hints["unread"])
    if found and ev.hints.get("os"):
        found[0].evidence.append("the log comes from %s (%s)%s" % (
            ev.hints["os"], ev.hints.get("os_from", "").strip(), "".join(
                ", %s %s" % (k, ev.hints[k]) for k in ("python", "torch") if ev.hints.get(k))))
    if not found and ev.hints.get("distributed"):
        ev.hints["note"] = distributed.note(ev)
    elif not found:
        others = ev.hints.get("other_crashes") or []
        if others and others[-1]["exceptions"]:
            ev.hints["note"] = ("the log shows a crash that is not a DataLoader failure: %s"
                                % others[-1]["exceptions"][-1].last_line())
        else:
            ev.hints["note"] = "the log shows no DataLoader failure"
