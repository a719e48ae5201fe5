"""Render a report: the terminal text, or exactly SPEC.md's JSON object.

Paths, evidence, notes, excerpts and patches come from logs, scripts, file names and
exceptions: every such text is made inert (:mod:`flake8_dlworker.untrusted`) here,
where it is printed; the catalog's own words and the report's colours are ours."""
import json
import os
import shlex
import shutil
import sys
import textwrap

from doctor.diagnose import relative
from doctor.sourcefile import read_source
from flake8_dlworker.notebook import NotebookError, cell_place, parse
from flake8_dlworker.untrusted import inert, inert_line, inert_tree

SCHEMA = 1
_STYLE = {"bold": "1", "red": "31", "green": "32", "yellow": "33", "dim": "2", "cyan": "36"}


def use_colour(stream):
    return (hasattr(stream, "isatty") and stream.isatty()
            and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb")


def to_json(ev, diagnoses):
    target = ev.target
    if ev.source == "run" and target and not target.startswith("-"):
        target = relative(target) if os.path.exists(target) else target
    return {
        "schema": SCHEMA,
        "target": target,
        "start_method": ev.start_method,
        "outcome": ev.outcome,
        "exit_code": ev.exit_code,
        "diagnoses": [d.to_json() for d in diagnoses],
        "notes": list(ev.notes),
        "host": {key: ev.host.get(key) for key in
                 ("os", "python", "torch", "cuda", "cpus", "ram_gb", "shm_gb", "nofile_limit")},
    }


def _payload_lines(ev):
    """What each worker receives, per loader: ``train.py:14: each of 4 workers receives
    dataset 1.2 MiB (pickled in 0.01 s), collate_fn 212 B``."""
    by_loader = {}
    for part in ev.payload:
        by_loader.setdefault(part.get("key"), []).append(part)
    lines = []
    for key, parts in by_loader.items():
        workers = parts[0].get("workers")
        lines.append("%s: each of %s workers receives %s" % (
            _loader_place(ev, key) or "a loader", workers, ", ".join(
                "%s %s (pickled in %.2f s)" % (p["role"], _bytes(p["bytes"]), p["seconds"])
                if p["seconds"] >= 0.01 else "%s %s" % (p["role"], _bytes(p["bytes"]))
                for p in parts)))
    return lines


def _bytes(count):
    for unit, size in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if count >= size:
            return "%.1f %s" % (count / size, unit)
    return "%d B" % count


def _loader_place(ev, key):
    """``train.py:14`` for a loader's key, as its ``loader`` event recorded it."""
    for loader in ev.loaders:
        if loader.get("key") == key and loader.get("line"):
            return "%s:%d" % (relative(loader["path"]), loader["line"])
    return None


def json_text(ev, diagnoses):
    found = to_json(ev, diagnoses)
    if ev.fix is not None:  # the combined fix of every diagnosis, and its rounds
        found["fix"] = ev.fix
    if ev.memory is not None:  # per-process RSS over the run (doctor.memory)
        found["memory"] = ev.memory
    if ev.source == "run":  # what each worker receives, pickled as spawn does
        found["payload"] = [dict(p, loader=_loader_place(ev, p.get("key"))) for p in ev.payload]
    if ev.forecast is not None:  # a worker's steady rise, and how long memory lasts
        found["forecast"] = ev.forecast.to_json()
    return dump_json(found)


def dump_json(found):
    """A report's JSON text: every string inert, so that ``jq -r`` prints no escape
    sequence either, and only ASCII (``\\u`` escapes for the rest)."""
    return json.dumps(inert_tree(found), indent=2, ensure_ascii=True)


class Terminal:
    def __init__(self, colour, encoding=None):
        self.colour = colour
        self.encoding = encoding  # of the output; None: sys.stdout's (the memory chart)

    def style(self, text, *names):
        if not self.colour:
            return text
        codes = ";".join(_STYLE[n] for n in names)
        return "\x1b[%sm%s\x1b[0m" % (codes, text)

    def render(self, ev, diagnoses, full=True, summary=None):
        """The report; ``full``: every line of evidence, the diffs and the memory chart
        (else one line each); ``summary``: the closing block of a run (:class:`Summary`)."""
        out = [self.style(_headline(ev), "bold")]
        out.extend(self.style("note: " + inert_line(note), "yellow") for note in ev.notes)
        if not diagnoses:
            out.append(self.style("No DataLoader worker problem found.", "green"))
            if ev.hints.get("note"):
                note = inert_line(ev.hints["note"])
                out.append(note[0].upper() + note[1:] + ".")
        for number, diag in enumerate(diagnoses):
            out.append("")
            out.extend(self._diagnosis(ev, number, diag, full))
        if full and ev.fix and (len(ev.fix["rounds"]) > 1
                                or not any(d.patch == ev.fix["patch"] for d in diagnoses)):
            out.extend(self._fix(ev.fix))  # not when it only repeats the one patch
        out.extend(self._memory(ev) if full else self._memory_line(ev))
        if summary is not None:
            out.extend(self._summary(ev, diagnoses, summary))
        return "\n".join(out) + "\n"

    def _diagnosis(self, ev, number, diag, full):
        colour = "red" if number == 0 else "yellow"
        out = ["%s %s   [%s]" % (self.style(diag.code, "bold", colour), diag.rule.title,
                                 _label(ev, number, diag))]
        if diag.path:
            out.append("  at %s" % self.style(_place(diag), "cyan"))
            out.extend(self._excerpt(diag.path, diag.line, _source_roots(ev), diag.cell,
                                     around=2 if full else 1))
        out.extend(self._evidence(diag.evidence) if full else self._first_evidence(diag))
        if full:
            out.append("  why: " + diag.rule.explanation)
        else:
            out.extend(textwrap.wrap(diag.rule.explanation, _width(), initial_indent="  why: ",
                                     subsequent_indent="       ", break_long_words=False))
        out.append("  fix: " + diag.rule.fix_title)
        if diag.patch and full:
            out.append("  patch (%s):" % patch_status(diag.verified, ev.source))
            out.extend("    " + x for x in inert(diag.patch).rstrip("\n").split("\n"))
        elif diag.patch:
            out.append("  patch (%s): %s; -v shows it" % (
                patch_status(diag.verified, ev.source), diff_stat(diag.patch)))
        return out

    def _evidence(self, evidence):
        out = ["  evidence:"] if evidence else []
        for item in evidence:
            lines = inert(item).split("\n")
            out.append("    - " + lines[0])
            out.extend("      " + self.style(x, "dim") for x in lines[1:])
        return out

    def _first_evidence(self, diag):
        """The first line of the first evidence, and how many more -v shows."""
        if not diag.evidence:
            return []
        first = inert_line(diag.evidence[0].split("\n")[0])
        more = len(diag.evidence) - 1
        return textwrap.wrap(first + (" (and %d more with -v)" % more if more else ""),
                             _width(), initial_indent="  evidence: ",
                             subsequent_indent="            ", break_long_words=False)

    def _summary(self, ev, diagnoses, summary):
        """What a person reads first when the screen stops: each diagnosis in one line,
        the fix in one line, and where the full report is."""
        out = ["", self.style("summary", "bold")]
        for number, diag in enumerate(diagnoses):
            out.append("  %s %s at %s (%s)" % (
                self.style(diag.code, "bold", "red" if number == 0 else "yellow"),
                diag.rule.title, _place(diag) if diag.path else "no file named",
                _label(ev, number, diag)))
        if not diagnoses:
            out.append("  nothing found")
        else:
            out.append("  fix: " + summary.fix_line(ev, diagnoses))
        out.append("  full report: " + summary.report_line())
        return out

    def _memory(self, ev):
        """A run's memory timeline, one sparkline per process (doctor.memory_chart);
        plain text, no colour."""
        from doctor import memory_chart

        if ev.source != "run" or not memory_chart.has_timeline(ev.memory):
            return []
        encoding = self.encoding or getattr(sys.stdout, "encoding", None)
        width = max(40, min(80, shutil.get_terminal_size((80, 24)).columns))
        out = [""] + memory_chart.chart_lines(ev.memory, encoding, width)
        more = _payload_lines(ev) + (ev.forecast.text() if ev.forecast is not None else [])
        for line in more:  # within the chart's width, as the chart is
            out.extend(textwrap.wrap(inert_line(line), width, initial_indent="  ",
                                     subsequent_indent="    ", break_long_words=False))
        return out

    def _memory_line(self, ev):
        """The memory timeline in one line (the chart: -v), and a forecast if any."""
        from doctor import memory_chart

        if ev.source != "run" or not memory_chart.has_timeline(ev.memory):
            return []
        out = ["", memory_chart.peak_line(ev.memory) + "; -v draws the chart"]
        for line in ev.forecast.text() if ev.forecast is not None else []:
            out.extend(textwrap.wrap(inert_line(line), _width(), initial_indent="  ",
                                     subsequent_indent="    ", break_long_words=False))
        return out

    def _fix(self, fix):
        """The combined fix: each round's diagnosis, then the one diff of them all."""
        if not fix or not fix.get("patch"):
            return []
        out = ["", self.style("combined fix", "bold") + " (%s)" % {
            True: "the patched copy passed", False: "the patched copy still fails",
            None: NOT_RUN}[fix["verified"]]]
        for entry in fix["rounds"]:
            out.append(inert_line("  round %d: %s, diagnosed %s%s" % (
                entry["round"], entry["outcome"], ", ".join(entry["diagnoses"]) or "nothing",
                "; fixed " + "; ".join(entry["fixed"]) if entry["fixed"] else "")))
        out.extend("    " + x for x in inert(fix["patch"]).rstrip("\n").split("\n"))
        return out

    def _excerpt(self, path, line, roots, cell=None, around=2):
        """The lines around ``line`` of the file, or of the notebook's ``cell``."""
        if not line:
            return []
        data, why = read_source(path, roots)
        if data is None:
            if os.path.lexists(path):
                return [self.style(inert_line("  (no excerpt: %s)" % why), "dim")]
            return []
        lines = _cell_lines(data, cell) if cell is not None else \
            data.decode("utf-8", errors="replace").splitlines()
        if not 0 < line <= len(lines):
            return []
        found = []
        for number in range(max(1, line - around), min(len(lines), line + around) + 1):
            mark = ">" if number == line else " "
            text = "  %s %4d | %s" % (mark, number, inert_line(lines[number - 1]))
            found.append(self.style(text, "bold") if number == line else text)
        return found


class Summary:
    """What the closing block of a run says beyond the diagnoses: the command that
    writes the fix, and where the full report is.

    ``command``: the doctor's arguments naming the target (``["train.py", "--epochs",
    "1"]`` or ``["-m", "pkg.train"]``), with the options a re-run needs; ``applied``:
    --apply ran; ``report_file``: where --report wrote the JSON report, or None."""

    def __init__(self, command, applied=False, report_file=None, full=False):
        self.command, self.applied = command, applied
        self.report_file, self.full = report_file, full

    def fix_line(self, ev, diagnoses):
        if self.applied:
            return "--apply ran: the lines \"doctor: wrote\" above name each file and its backup"
        if any(d.patch for d in diagnoses) or (ev.fix or {}).get("patch"):
            return "python -m doctor --apply %s" % inert_line(shlex.join(self.command))
        return "%s (no patch is made for it)" % diagnoses[0].rule.fix_title

    def report_line(self):
        more = "-v shows every line of evidence, the diff and the memory chart"
        if self.report_file:
            where = "%s (JSON, written by --report)" % inert_line(self.report_file)
            return where if self.full else "%s; %s" % (where, more)
        return "%s; --report FILE writes it as JSON" % ("above" if self.full else more)


#: a patch that no re-run has proved yet (``verified`` null, as SPEC.md says)
NOT_RUN = "not yet run: use --verify"
#: the same for ``explain``, which runs nothing: the script's run under the doctor does
NOT_RUN_LOG = "not yet run: python -m doctor --verify SCRIPT re-runs it"


def patch_status(verified, source="run"):
    """Whether a diagnosis' patch was re-run, in the report's words: ``verified`` is
    None before any re-run (the default run: the patch has only the proof it has
    without one, :func:`doctor.patches.new_problems`), True when the patched copy ran
    through with the diagnosis gone, False when it did not; ``source``: the evidence's
    (a log's patch is proved by a run of its script)."""
    if verified is None:
        return NOT_RUN_LOG if source == "log" else NOT_RUN
    return "verified by a re-run" if verified else \
        "not verified: the re-run of the patched copy still fails"


def diff_stat(patch):
    """``train.py +4 -1`` for a unified diff: the lines added and removed per file."""
    files, counts = [], {}
    for line in patch.splitlines():
        if line.startswith("+++ "):
            name = line[4:].split("\t")[0]
            name = name[2:] if name.startswith("b/") else name
            files.append(name)
            counts[name] = [0, 0]
        elif files and line.startswith("+"):
            counts[files[-1]][0] += 1
        elif files and line.startswith("-") and not line.startswith("--- "):
            counts[files[-1]][1] += 1
    return ", ".join(inert_line("%s +%d -%d" % (f, *counts[f])) for f in files) or "a diff"


def _width():
    """The terminal's width for wrapped text, 40 to 120 columns."""
    return max(40, min(120, shutil.get_terminal_size((80, 24)).columns))


def _label(ev, number, diag):
    """``found statically`` for ``check`` (nothing ran), else the runtime's words."""
    if ev.source == "check":
        return "found statically"
    label = "root cause" if number == 0 and ev.outcome != "passed" else "also found"
    if number == 0 and diag.elsewhere:
        label = "followed another node's failure"
    return "%s, %s" % (label, diag.confidence)


def _place(diag):
    """``train.py:14``, a notebook's ``train.ipynb:cell 3:2`` (as ruff prints it); in a
    distributed run ``train.py:14 (rank 1)`` (``node 0, rank 1`` where there are several)."""
    path = inert_line(diag.path)
    if not diag.line:
        place = path
    elif diag.cell is not None:
        place = "%s:%s" % (path, cell_place(diag.cell, diag.line))
    else:
        place = "%s:%s" % (path, diag.line)
    if diag.rank is not None:
        node = "node %s, " % inert_line(str(diag.node)) if diag.node is not None else ""
        place += " (%srank %d)" % (node, diag.rank)
    return place


def _cell_lines(data, cell):
    """The lines of a notebook's cell as it stores them ([] if it is not there)."""
    try:
        found = parse(data).cell(cell)
    except NotebookError:
        return []
    return found.source.splitlines() if found is not None else []


def _source_roots(ev):
    """A log's paths are untrusted: only files under these folders are shown (None: the
    run's own files, any folder)."""
    return ev.hints.get("source_roots", []) if ev.source == "log" else None


def _headline(ev):
    target = inert_line(ev.target)
    if ev.source == "log":
        return "doctor explain: %s" % target
    if ev.source == "check":
        return "doctor check: %s (read, not run; for %s)" % (target, ev.start_method)
    what = {"crashed": "crashed", "passed": "ran to the end",
            "timeout": "was ended after the --timeout", "stopped": "was stopped"}[ev.outcome]
    status = "" if ev.exit_code is None else " (exit status %d)" % ev.exit_code
    if ev.ranks:  # a distributed run: its ranks, and who started them
        started = inert_line(ev.hints.get("launcher") or "")
        return "doctor: %s %s in %d rank(s)%s, workers under %s%s" % (
            target, what, len(ev.ranks), " under " + started if started else "",
            ev.start_method, status)
    return "doctor: %s %s under %s%s" % (target, what, ev.start_method, status)
