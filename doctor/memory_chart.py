"""The memory timeline as a few lines of text for the terminal report.

One line per process on a shared time axis, each a sparkline of its RSS on a common
scale (the highest peak of all), so heights compare between processes::

    memory (RSS, 0 to 227 MiB over 10.1 s; 21.9 GiB available):
      main (pid 41)                    ▁▃▄▅▅▆▆▆▆▇▇▇█████████████████████  peak 226 MiB
      worker 0 (pid 42), loader 1                ▁▁▂▄▄▅▅▆▆▆▆▆▇▇▇▇▇▇███████   peak 227 MiB
      worker 1 (pid 43), loader 1                ▁▁▂▃▄▅▅▆▆▆▆▆▇▇▇▇▇▇███████   peak 227 MiB
                                   0 s                              10.1 s
      ... and 1 more process under 50 MiB: resource tracker (pid 40)

Each process is named by its role and pid, and a worker by its loader too (the loaders
numbered in the order the script made them), so the workers of two loaders, or of two
epochs of one loader, are told apart.

A column is one time slot: the highest RSS sampled in it, or the last one before it
(the series keeps a point only when RSS moved or time went by); a space where the process
did not exist yet or any more. Small processes that are neither the main process nor a
worker (the resource tracker) are folded into one line, and past :data:`MAX_PROCESSES`
lines the processes with the lowest peaks are. No line is wider than ``width`` and none
has a colour code; where the output's encoding cannot write the blocks, the levels are
ASCII characters.
"""

BLOCKS = "▁▂▃▄▅▆▇█"
#: the ASCII levels: the space is "no process", the others low to high
ASCII_LEVELS = " .:-=+*#%@"
#: process lines at most (the rest are summed up in one line)
MAX_PROCESSES = 8
#: a process that is neither main nor a worker and stays under this is folded away
SMALL_GB = 50 / 1024
#: the widest label column (role, pid, loader); longer labels are cut
MAX_ROLE = 32
_INDENT = "  "


def can_encode(encoding):
    """Whether text in ``encoding`` can hold the block characters."""
    try:
        (BLOCKS + "…").encode(encoding or "ascii")
    except (UnicodeError, LookupError, TypeError):
        return False
    return True


def size_text(gb, places=2):
    """``1.23 GiB``, or ``212 MiB`` under 1 GiB."""
    if gb < 1:
        return "%d MiB" % round(gb * 1024)
    return "%.*f GiB" % (places, gb)


def chart_lines(memory, encoding="utf-8", width=80):
    """The chart of ``memory`` (``ev.memory``, see :mod:`doctor.memory`) as lines
    without newlines; [] when it holds no sample."""
    unicode = can_encode(encoding)
    processes = [p for p in (memory or {}).get("processes") or [] if _points(p)]
    if not processes:
        return []
    start = min(_points(p)[0][0] for p in processes)
    end = max(_points(p)[-1][0] for p in processes)
    top = max(_peak(p) for p in processes)
    shown, small, more = _choose(processes)

    header = "memory (RSS, 0 to %s over %s" % (size_text(top, 1), _seconds(end - start))
    if memory.get("available_gb") is not None:
        header += "; %s available" % size_text(memory["available_gb"], 1)
    lines = [_cut(header + "):", width, unicode)]

    roles = [_role(p) for p in shown]
    role_width = min(MAX_ROLE, max(len(r) for r in roles))
    peaks = ["peak " + size_text(_peak(p)) for p in shown]
    peak_width = max(len(p) for p in peaks)
    columns = max(1, width - len(_INDENT) - role_width - 1 - 2 - peak_width)
    slots = 1 if end <= start else columns
    levels = BLOCKS if unicode else ASCII_LEVELS[1:]
    for process, role, peak in zip(shown, roles, peaks):
        spark = _spark(_points(process), start, end, slots, top, levels)
        lines.append(_cut("%s%s %s  %s" % (_INDENT, _cut(role, role_width, unicode).ljust(
            role_width), spark.ljust(slots), peak), width, unicode))
    if slots > 1:  # the time axis under the sparklines
        left, right = "0 s", _seconds(end - start)
        if len(left) + 1 + len(right) <= slots:
            lines.append(_cut("%s%s %s%s" % (_INDENT, " " * role_width, left,
                                             right.rjust(slots - len(left))), width, unicode))
    if more:
        kind = "workers" if all(str(p.get("role")).startswith("worker") for p in more) \
            else "processes"
        if len(more) == 1:
            kind = kind[:-1]
        lines.append(_cut("%s... and %d more %s, peak at most %s" % (
            _INDENT, len(more), kind, size_text(max(_peak(p) for p in more))),
            width, unicode))
    if small:
        lines.append(_cut("%s... and %d more %s under %d MiB: %s" % (
            _INDENT, len(small), "process" if len(small) == 1 else "processes",
            round(SMALL_GB * 1024), ", ".join(_role(p) for p in small)), width, unicode))
    return lines


def peak_line(memory):
    """The timeline in one line: ``memory: 4 processes over 5.5 s, highest peak 226 MiB
    (main (pid 41))``."""
    processes = [p for p in (memory or {}).get("processes") or [] if _points(p)]
    top = max(processes, key=_peak)
    times = [t for p in processes for t, _ in _points(p)]
    return "memory: %d process%s over %s, highest peak %s (%s)" % (
        len(processes), "" if len(processes) == 1 else "es", _seconds(max(times) - min(times)),
        size_text(_peak(top)), _role(top))


def has_timeline(memory):
    """Whether ``memory`` is worth a chart: a process sampled at least twice."""
    return any(len(_points(p)) >= 2 for p in (memory or {}).get("processes") or [])


def _choose(processes):
    """(shown, small, more): the processes with a line, in their order (main, workers,
    the rest); the small ones folded away; those left out for want of lines (main
    keeps its line, then the highest peaks)."""
    small = [p for p in processes if not _main_or_worker(p) and _peak(p) < SMALL_GB]
    if len(small) == len(processes):  # nothing else: show them
        small = []
    rest = [p for p in processes if id(p) not in {id(s) for s in small}]
    if len(rest) <= MAX_PROCESSES:
        return rest, small, []
    mains = [p for p in rest if p.get("role") == "main"][:1]
    others = sorted((p for p in rest if id(p) not in {id(m) for m in mains}),
                    key=lambda p: -_peak(p))
    keep = {id(p) for p in mains + others[:MAX_PROCESSES - 1 - len(mains)]}
    # MAX_PROCESSES - 1 lines: the last is "... and N more"
    return ([p for p in rest if id(p) in keep], small,
            [p for p in rest if id(p) not in keep])


def _spark(points, start, end, slots, top, levels):
    """One character per time slot [lo, hi): the level of the highest RSS the process
    had in it (sampled there, or held from the last sample before), a space where it
    did not exist."""
    first, last = points[0][0], points[-1][0]
    span = (end - start) / slots
    out = []
    i = 0  # the first point of a later slot
    held = None  # the RSS of the last point before this slot
    for slot in range(slots):
        final = slot == slots - 1
        lo = start + slot * span
        hi = end if final else lo + span
        inside = []
        while i < len(points) and (final or points[i][0] < hi):
            inside.append(points[i][1])
            i += 1
        values = inside + ([held] if held is not None else [])
        if inside:
            held = inside[-1]
        if last < lo or not (final or first < hi) or not values:
            out.append(" ")
            continue
        level = int(max(values) / top * len(levels)) if top > 0 else 0
        out.append(levels[max(0, min(len(levels) - 1, level))])
    return "".join(out)


def _points(process):
    """[(t, rss_gb)] in time order, without malformed samples."""
    times, sizes = process.get("t") or [], process.get("rss_gb") or []
    found = []
    for t, rss in zip(times, sizes):
        if isinstance(t, (int, float)) and isinstance(rss, (int, float)):
            found.append((float(t), max(0.0, float(rss))))
    return sorted(found, key=lambda point: point[0])


def _peak(process):
    return max(rss for _, rss in _points(process))


def _role(process):
    """The label on one line, without control characters (a process names itself): its
    role, rank, pid and loader, ``worker 0 of rank 1 (pid 4321), loader 2``."""
    label = " ".join(str(process.get("role") or "process").split())
    if isinstance(process.get("rank"), int):  # a distributed run
        label = ("rank %d" % process["rank"] if label == "main"
                 else "%s of rank %d" % (label, process["rank"]))
    if isinstance(process.get("pid"), int):
        label += " (pid %d)" % process["pid"]
    if isinstance(process.get("loader"), int):
        label += ", loader %d" % process["loader"]
    return "".join(c if c.isprintable() else "?" for c in label)


def _main_or_worker(process):
    role = str(process.get("role") or "")
    return role == "main" or role.startswith("worker ")


def _seconds(value):
    return "%.1f s" % value if value < 100 else "%d s" % round(value)


def _cut(text, width, unicode=True):
    if len(text) <= width:
        return text
    return text[:width - 1] + ("…" if unicode else "~")
