"""``doctor explain``: a saved log -> the same evidence record, running nothing from it."""
import os

from doctor.diagnose import user_frame
from doctor.evidence import Evidence
from doctor.logparse import LogParser
from doctor.static import static_findings


class BadLog(Exception):
    """The log cannot be read as text: the CLI prints it on one line, exit 2."""


def read_lines(path, stream=None):
    """The log's lines, streamed; ``-`` reads stdin."""
    if path == "-":
        handle = stream
    else:
        if not os.path.exists(path):
            raise BadLog("%s: no such file" % path)
        if os.path.isdir(path):
            raise BadLog("%s: is a directory, not a log file" % path)
        try:
            handle = open(path, "rb")
        except OSError as exc:
            raise BadLog("%s: cannot read: %s" % (path, exc.strerror or exc))
    return handle


def explain(path, stdin=None, start_method="spawn"):
    handle = read_lines(path, stdin)
    parser = LogParser()
    first = True
    seen_text = False
    try:
        for raw in handle:
            if first:
                first = False
                if _looks_binary(raw):
                    raise BadLog("%s: looks like a binary file, not a log" % path)
            text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
            if text.strip():
                seen_text = True
            parser.feed(text)
    except OSError as exc:
        raise BadLog("%s: cannot read: %s" % (path, exc.strerror or exc))
    finally:
        if path != "-":
            handle.close()
    if not seen_text:
        raise BadLog("%s: the log is empty" % path)
    parser.close()
    ev = Evidence(source="log", target=path, start_method=start_method, outcome="crashed",
                  exceptions=parser.exceptions, lines=parser.lines,
                  warnings=parser.warnings, stacks=parser.stacks)
    ev.static = _static_for_user_files(ev, start_method)
    return ev


def _looks_binary(chunk):
    """Control bytes other than whitespace, ESC and the NUL torch writes after ERROR lines."""
    sample = chunk[:4096] if isinstance(chunk, bytes) else chunk[:4096].encode("utf-8", "replace")
    if not sample:
        return False
    bad = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13, 27, 0))
    return bad > len(sample) * 0.05 or sample.count(0) > len(sample) * 0.3


def _static_for_user_files(ev, start_method):
    """The checker on the user's files named in the log, where they exist here."""
    paths = []
    for exc in ev.all_exceptions():
        frame = user_frame(exc)
        if frame is not None and frame.path not in paths and os.path.isfile(frame.path):
            paths.append(frame.path)
    found = []
    for path in paths[:8]:
        found.extend(static_findings(path, start_method))
    return found
