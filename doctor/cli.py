"""The command line: run (default), ``explain`` and ``check``.

Exit status (SPEC.md): 0 nothing found, 1 diagnoses found, 2 bad usage or input,
3 the doctor itself failed.
"""
import argparse
import ast
import importlib.machinery
import json
import math
import os
import stat
import sys

from doctor import compare, notebook_run, signals
from doctor.agent import OWN
from doctor.evidence import Evidence
#: the largest script the doctor reads; a bigger file is refused before it is read
from doctor.lint import MAX_FILE_BYTES as MAX_SCRIPT_BYTES
from doctor.named_file import special_kind, stat_named, unreadable
from flake8_dlworker import platforms
from flake8_dlworker.untrusted import inert_line

START_METHODS = ("spawn", "forkserver", "fork")
CHECK_FORMATS = ("text", "json", "sarif", "github")
#: run options that take a value, for splitting the doctor's options from the script's
_VALUED = ("--start-method", "--timeout", "--max-batches", "--max-rounds", "--plot",
           "--report")

RUN_USAGE = ("python -m doctor [options] (SCRIPT | -m MODULE | torchrun [TORCHRUN-ARGS] SCRIPT) "
             "[ARGS...]")
DESCRIPTION = """\
Run a PyTorch training script under a forced multiprocessing start method (spawn by
default, as on Windows and macOS), watch every DataLoader worker, and explain the root
cause of a crash with the evidence it rests on.

  python -m doctor train.py --epochs 1        run and diagnose
  python -m doctor -m mypkg.train             run a module, like python -m
  python -m doctor torchrun --nproc-per-node 2 train.py
                                              run a launcher (or -m torch.distributed.run):
                                              every rank and its workers are watched
  python -m doctor explain crash.log          diagnose a saved log (- for stdin)
  python -m doctor explain n0.log n1.log      a distributed job: the first failure's rank
  python -m doctor check train.py             static findings only
  python -m doctor check --format sarif src/  the same for CI: sarif, github, json

The report ends with a summary: one line per diagnosis (code, title, file:line,
confidence), the fix in one line, and where the full report is. On a terminal the
evidence, the diff and the memory chart are shortened to a line each, so the report
fits one screen: -v shows them in full (as does output to a file or a pipe), and
--report FILE writes the full report as JSON beside it.

Exit status: 0 nothing found, 1 diagnoses found (a crash the doctor cannot explain
counts), 2 bad usage or input, 3 the doctor itself failed, 128+N when the doctor was
ended by signal N (SIGINT, SIGTERM, SIGHUP): it then ends the script's whole process
tree and still prints the report of what it learned."""


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line, exit 2."""

    def error(self, message):
        raise UsageError(message)


#: the shortest --timeout: less cannot even start the interpreter of the target
MIN_TIMEOUT_S = 1.0


def _timeout_seconds(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number of seconds" % text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError("%r is not a finite number of seconds" % text)
    if value < MIN_TIMEOUT_S:
        raise argparse.ArgumentTypeError("must be at least %g second" % MIN_TIMEOUT_S)
    return value


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a whole number" % text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def _plot_file(text):
    from doctor import memory_plot

    if memory_plot.suffix(text) is None:
        raise argparse.ArgumentTypeError("%r: give a .png or .svg file" % text)
    return text


def run_parser():
    parser = _Parser(prog="python -m doctor", usage=RUN_USAGE, description=DESCRIPTION,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--start-method", choices=START_METHODS, default="spawn",
                        help="start method forced on every DataLoader (default: spawn)")
    parser.add_argument("--timeout", type=_timeout_seconds, metavar="SECONDS",
                        help="end the whole process tree after this long and report "
                             "what was learned (at least 1; default: no limit)")
    parser.add_argument("--max-batches", type=_positive_int, metavar="N",
                        help="stop the script once every DataLoader that started has "
                             "delivered N batches (outcome 'stopped')")
    parser.add_argument("--compare", action="store_true",
                        help="run under the script's own start method first, then under "
                             "the forced one, and say how they differ (both runs bounded "
                             "by --max-batches, default %d)" % compare.DEFAULT_BATCHES)
    parser.add_argument("--json", action="store_true",
                        help="print exactly one JSON object on stdout (SPEC.md schema); "
                             "the script's own output goes to stderr")
    parser.add_argument("-m", dest="module", metavar="MODULE",
                        help="run a module as python -m does, in place of SCRIPT")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="on a terminal too, the full report: every line of evidence, "
                             "the diffs and the memory chart (output to a file or a pipe "
                             "always has them)")
    parser.add_argument("--report", metavar="FILE",
                        help="also write the full report (the --json object) to FILE; the "
                             "terminal shows the summary")
    parser.add_argument("--plot", type=_plot_file, metavar="FILE.png|FILE.svg",
                        help="also draw each process's memory over the run to this file "
                             "(needs matplotlib: the extra [plot])")
    # patches (doctor.patches)
    parser.add_argument("--verify", action="store_true",
                        help="re-run a patched copy of the script to prove each patch")
    parser.add_argument("--apply", action="store_true",
                        help="write verified patches to the files, keeping a .orig backup")
    parser.add_argument("--force", action="store_true",
                        help="with --apply: write the patches that were not verified too")
    parser.add_argument("--max-rounds", type=_positive_int, metavar="N", default=4,
                        help="with --verify/--apply: fix and re-run at most N times until "
                             "the patched copy passes (default: 4)")
    return parser


def explain_parser():
    parser = _Parser(prog="python -m doctor explain",
                     description="Diagnose a saved log or traceback; runs nothing from it.")
    parser.add_argument("log", metavar="LOGFILE", nargs="+",
                        help="the log file, or - for stdin; several logs of one "
                             "distributed job (one per node or per rank) are read together")
    parser.add_argument("--start-method", choices=START_METHODS, default="spawn",
                        help="start method for the static check of files the log names")
    parser.add_argument("--json", action="store_true", help="print the JSON report")
    parser.add_argument("--source", action="append", default=[], metavar="DIR",
                        help="a folder whose files the log's paths may name, besides the "
                             "working directory (files elsewhere are never read)")
    return parser


CHECK_EPILOG = """\
What is reported is what `flake8 --select DLW` reports with the same configuration:
flake8's config files (setup.cfg, tox.ini, .flake8; --config, --isolated), its
per-file-ignores, extend-ignore, `# noqa` comments and the --dlw-* options.

Exit status: 0 nothing found; 1 findings (a file that is not valid Python, flake8's
E999, counts); 2 bad usage or input; 3 the doctor itself failed; 4 no finding, but
some files could not be checked (each is named in a warning on stderr)."""


def check_parser():
    from flake8.defaults import EXCLUDE as FLAKE8_EXCLUDE

    from doctor.sources import NOTEBOOK_EXCLUDE, patterns

    parser = _Parser(prog="python -m doctor check", epilog=CHECK_EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter,
                     description="Static findings only, in the doctor's report format or, "
                                 "for CI, as SARIF or GitHub workflow commands.")
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="Python files, notebooks (.ipynb), or directories to search "
                             "for both")
    parser.add_argument("--start-method", choices=START_METHODS, default=None,
                        help="the start method to check for (default: flake8's "
                             "dlw-start-method setting, else spawn)")
    parser.add_argument("--format", choices=CHECK_FORMATS, default="text",
                        help="text: the doctor's report (default); json: its JSON object; "
                             "sarif: a SARIF 2.1.0 log of every finding (code scanning); "
                             "github: one GitHub Actions ::error command per finding")
    parser.add_argument("--json", dest="format", action="store_const", const="json",
                        help="the same as --format json")
    parser.add_argument("--exit-zero", action="store_true",
                        help="exit 0 even when there are findings (2 and 3 still mean errors)")
    parser.add_argument("--config", metavar="FILE",
                        help="flake8's --config: read this file instead of setup.cfg, "
                             "tox.ini or .flake8")
    parser.add_argument("--isolated", action="store_true",
                        help="flake8's --isolated: ignore every configuration file")
    parser.add_argument("--exclude", type=patterns, default=None, metavar="PATTERNS",
                        help="comma-separated globs of folders and files to skip, in place "
                             "of flake8's exclude setting, as flake8's --exclude (default: "
                             "that setting, else flake8's %s; nothing else, so .venv, "
                             "build... are checked as flake8 checks them; notebooks are "
                             "never taken from %s)" % (",".join(FLAKE8_EXCLUDE),
                                                       ",".join(NOTEBOOK_EXCLUDE)))
    parser.add_argument("--extend-exclude", type=patterns, default=(), metavar="PATTERNS",
                        help="globs to skip besides --exclude's")
    parser.add_argument("--diff", action="store_true",
                        help="print only the findings' patches: one unified diff per file, "
                             "for git apply or patch -p1")
    parser.add_argument("--fix", action="store_true",
                        help="write the findings' patches to the files, then report what "
                             "is left; runs nothing")
    return parser


def split_run_args(argv):
    """(doctor options, target) where target is [SCRIPT, *ARGS] or ["-m", MODULE, *ARGS]."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return argv[:i], argv[i + 1:]
        if arg == "-m":
            if i + 1 >= len(argv):
                raise UsageError("-m needs a MODULE")
            return argv[:i], argv[i:]
        if arg.startswith("-m") and len(arg) > 2:
            return argv[:i], ["-m", arg[2:]] + argv[i + 1:]
        if not arg.startswith("-") or arg == "-":
            return argv[:i], argv[i:]
        if arg in _VALUED:
            i += 2
            continue
        i += 1
    return argv, []


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "explain":
            return cmd_explain(explain_parser().parse_args(argv[1:]))
        if argv and argv[0] == "check":
            return cmd_check(check_parser().parse_args(argv[1:]))
        head, target = split_run_args(argv)
        options = run_parser().parse_args(head)
        if not target:
            raise UsageError("give a SCRIPT or -m MODULE to run (see --help)")
        return cmd_run(options, target)
    except UsageError as exc:
        print("doctor: error: %s" % inert_line(exc), file=sys.stderr)
        return 2
    except BrokenPipeError:
        return _reader_gone()
    except KeyboardInterrupt:
        print("doctor: interrupted", file=sys.stderr)
        return 3
    except Exception as exc:  # the doctor's own failure: say so in one line
        print("doctor: internal error: %s: %s" % (type(exc).__name__, inert_line(exc)),
              file=sys.stderr)
        if os.environ.get("DLW_DOCTOR_DEBUG"):
            raise
        return 3


def _reader_gone():
    """The reader of our output went away (``| head -1``): stop quietly, as Python's
    own tools do, with the status of a process ended by SIGPIPE (128 + 13); what is
    still buffered goes nowhere instead of raising again at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):
            pass
    os.close(devnull)
    return 128 + platforms.SIGPIPE


# -- run ----------------------------------------------------------------------------

def check_script(path):
    """One-line errors for what cannot be run: missing, a folder, not a regular file,
    too large, not Python (a notebook: not a notebook whose cells make one module)."""
    source = read_named(path)
    try:
        ast.parse(source, path)
    except SyntaxError as exc:
        raise UsageError("%s:%s: not valid Python: %s" % (path, exc.lineno, exc.msg))
    except (ValueError, MemoryError, RecursionError) as exc:
        raise UsageError("%s: not a Python script: %s" % (path, type(exc).__name__))


def read_named(path):
    """The bytes of a file named on the command line, or a one-line UsageError: missing,
    a folder, not a regular file, too large, binary, a notebook that is not one. The
    file's type and size are checked before it is read, so a FIFO, a device or a huge
    sparse file costs nothing. A notebook is returned only when its cells make one
    module; a script is not parsed here."""
    from flake8_dlworker.notebook import is_notebook

    kind = "notebook" if is_notebook(path) else "Python script"
    info = stat_named(path, UsageError)
    if stat.S_ISDIR(info.st_mode):
        raise UsageError("%s: is a directory; give the script to run (or -m PACKAGE)" % path)
    if not stat.S_ISREG(info.st_mode):
        raise UsageError("%s: is not a regular file (a %s); give a Python script"
                         % (path, special_kind(info.st_mode)))
    if info.st_size > MAX_SCRIPT_BYTES:
        raise UsageError("%s: is %d MB, too large for a %s (the limit is %d MB)"
                         % (path, info.st_size // 2 ** 20, kind, MAX_SCRIPT_BYTES // 2 ** 20))
    try:
        with open(path, "rb") as handle:
            head = handle.read(8192)
            if b"\0" in head:
                raise UsageError("%s: is a binary file, not a %s" % (path, kind))
            source = head + handle.read(MAX_SCRIPT_BYTES + 1 - len(head))
    except OSError as exc:
        raise UsageError(unreadable(path, exc))
    if len(source) > MAX_SCRIPT_BYTES:  # it grew since the stat
        raise UsageError("%s: too large for a %s" % (path, kind))
    if is_notebook(path):
        _check_notebook(path, source)
    return source


def _check_notebook(path, source):
    """A notebook's one-line error: not JSON, not a notebook, a format from the future,
    cells that do not make one module. A cell that is not Python is no error here: the
    check warns and skips it, and Jupyter runs the cells before it."""
    from doctor.static import parse_notebook

    try:
        parse_notebook(path, source)
    except ValueError as exc:
        raise UsageError(str(exc))


def module_file(name):
    """The file ``python -m NAME`` would run from the working directory, or None."""
    parts = name.split(".")
    search = [os.getcwd()] + [p for p in sys.path if p]
    spec = None
    for i in range(len(parts)):
        spec = importlib.machinery.PathFinder.find_spec(parts[i], search)
        if spec is None:
            return None
        if i < len(parts) - 1:
            search = list(spec.submodule_search_locations or [])
    if spec.submodule_search_locations:  # a package: its __main__.py
        candidate = os.path.join(spec.submodule_search_locations[0], "__main__.py")
        return candidate if os.path.isfile(candidate) else None
    return spec.origin if spec.origin and spec.origin.endswith(".py") else None


def cmd_run(options, target):
    from doctor import launchers, pipeline  # the run's stages load when there is a run

    if launchers.is_launcher(target):
        return _launcher_run(options, target)
    if target[0] == "-m":
        path = module_file(target[1])
        if path is None:
            raise UsageError("no module named %s (or it has no __main__.py)" % target[1])
    else:
        path = target[0]
    if options.force and not options.apply:
        raise UsageError("--force only goes with --apply")
    if options.report and os.path.exists(options.report) and os.path.samefile(
            options.report, path):
        raise UsageError("--report %s: is the script; give a new file for the report"
                         % options.report)
    if options.plot and not _plot_ready():
        return 2
    signals.install()
    check_script(path)
    if notebook_run.is_notebook(path):
        if options.compare:
            raise UsageError("--compare runs scripts; a notebook runs under the forced "
                             "start method only")
        if target[1:]:
            raise UsageError("a notebook takes no arguments (got %s)" % " ".join(target[1:]))
    elif options.compare:
        return _compare(options, target, path)
    try:
        found = pipeline.examine(target, _pipeline_options(options), path)
    except notebook_run.NotRunnable as exc:
        raise UsageError(str(exc))
    status = _report(found.ev, found.diagnoses, options, _rerun_args(options, target))
    _plot(options.plot, found.ev, path)
    return signals.exit_status() if signals.received() is not None else status


def _launcher_run(options, target):
    """``torchrun ... SCRIPT`` (or ``-m torch.distributed.run``): the launcher runs as
    the user would, each rank watched (doctor.launchers); the report is the script's."""
    from doctor import launchers, pipeline

    for name in ("compare", "verify", "apply"):
        if getattr(options, name):
            raise UsageError("--%s re-runs a script; under a launcher the doctor runs it "
                             "once and reports" % name)
    try:
        kind, name = launchers.script_of(target)
    except launchers.NotALauncherCommand as exc:
        raise UsageError(str(exc))
    if launchers.command(target) is None:
        raise UsageError("%s: not found on PATH (or run python -m doctor -m "
                         "torch.distributed.run ...)" % target[0])
    if kind == "program":
        raise UsageError("--no-python: the doctor watches Python ranks; give the launcher "
                         "the script itself")
    path = module_file(name) if kind == "module" else name
    if path is None:
        raise UsageError("no module named %s (or it has no __main__.py)" % name)
    check_script(path)
    if options.plot and not _plot_ready():
        return 2
    signals.install()
    found = pipeline.examine(target, _pipeline_options(options), path)
    status = _report(found.ev, found.diagnoses, options, _rerun_args(options, target))
    _plot(options.plot, found.ev, path)
    return signals.exit_status() if signals.received() is not None else status


def _pipeline_options(options, **changed):
    """The command line's run options as :class:`doctor.pipeline.Options`."""
    from doctor import pipeline

    values = dict(start_method=options.start_method, timeout=options.timeout,
                  max_batches=options.max_batches, verify=options.verify,
                  apply=options.apply, force=options.force, max_rounds=options.max_rounds,
                  stdout=sys.stderr if options.json else sys.stdout,
                  show_status=sys.stderr.isatty() and not options.json)
    values.update(changed)
    return pipeline.Options(**values)


def _rerun_args(options, target):
    """The doctor's arguments that run ``target`` again as this run did."""
    method = [] if options.start_method == "spawn" else ["--start-method",
                                                         options.start_method]
    return method + list(target)


def _compare(options, target, path):
    """--compare: the script's own start method, then the forced one (doctor.compare);
    the report of each, then the line that says how they differ."""
    from doctor import pipeline, report

    if options.verify or options.apply:
        raise UsageError("--compare reports; run --verify or --apply without it")
    if options.report:
        raise UsageError("--report writes the report of one run; run it without --compare")
    batches = options.max_batches or compare.DEFAULT_BATCHES
    runs = []
    for method in (OWN, options.start_method):
        if signals.received() is not None:
            break
        if runs and runs[0][0].start_method == method:
            break  # the script's own method is the forced one: the same run again
        found = pipeline.examine(target, _pipeline_options(
            options, start_method=method, max_batches=batches, fix=False), path)
        runs.append((found.ev, found.diagnoses))
    line = compare.summary(runs[0][0], runs[-1][0], options.start_method)
    last, diagnoses = runs[-1]
    if options.json:
        found = json.loads(report.json_text(last, diagnoses))
        found["compare"] = compare.to_json(runs, line)
        sys.stdout.write(report.dump_json(found) + "\n")
    else:
        terminal = report.Terminal(report.use_colour(sys.stdout))
        text = "\n".join(terminal.render(ev, found) for ev, found in runs)
        sys.stdout.write(text + "\n".join(map(inert_line, compare.lines(runs, line))) + "\n")
    sys.stdout.flush()
    _plot(options.plot, last, path)
    if signals.received() is not None:
        return signals.exit_status()
    return 1 if any(found for _ev, found in runs) else 0


def _plot_ready():
    """--plot: whether matplotlib imports, checked before the run; if not, one line."""
    from doctor import memory_plot

    if memory_plot.importable():
        return True
    print(memory_plot.MISSING, file=sys.stderr)
    return False


def _plot(plot, ev, path):
    """--plot: the memory timeline, written after the report; a file that cannot be
    written is one line on stderr and leaves the exit status as it is."""
    if not plot:
        return
    from doctor import memory_plot

    try:
        memory_plot.write(ev.memory, plot, os.path.basename(path))
    except OSError as exc:
        print("doctor: not written: %s: %s" % (plot, exc.strerror or exc), file=sys.stderr)
    except Exception as exc:  # matplotlib's own failure: the report is out already
        print("doctor: not written: %s: %s: %s" % (plot, type(exc).__name__, exc),
              file=sys.stderr)


def _report(ev, diagnoses, options, rerun=None):
    """Print the report; a run's (``rerun``: its arguments) ends with the summary, is
    shortened on a terminal without -v, and is written to --report's FILE too."""
    from doctor import report  # not on the way to the target's start: loaded beside it

    written = _write_report(getattr(options, "report", None), ev, diagnoses)
    if options.json:
        sys.stdout.write(report.json_text(ev, diagnoses) + "\n")
    elif rerun is None:
        sys.stdout.write(report.Terminal(report.use_colour(sys.stdout)).render(ev, diagnoses))
    else:
        full = options.verbose or not sys.stdout.isatty()
        summary = report.Summary(rerun, options.apply, written, full)
        sys.stdout.write(report.Terminal(report.use_colour(sys.stdout)).render(
            ev, diagnoses, full, summary))
    sys.stdout.flush()
    return 1 if diagnoses else 0


def _write_report(path, ev, diagnoses):
    """--report FILE: the JSON report written to FILE; FILE, or None when there is none
    or it could not be written (one line on stderr says why)."""
    if not path:
        return None
    from doctor import report

    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(report.json_text(ev, diagnoses) + "\n")
    except OSError as exc:
        print("doctor: not written: %s: %s" % (path, exc.strerror or exc), file=sys.stderr)
        return None
    return path


# -- explain, check -------------------------------------------------------------------

def cmd_explain(options):
    from doctor import pipeline
    from doctor.explain import BadLog, explain

    if "-" in options.log and sys.stdin is None:
        raise UsageError("-: there is no standard input to read the log from")
    for folder in options.source:
        if not os.path.isdir(folder):
            raise UsageError("--source %s: not a directory" % folder)
    try:
        ev = explain(options.log[0] if len(options.log) == 1 else options.log,
                     sys.stdin.buffer if sys.stdin else None,
                     options.start_method, options.source)
    except BadLog as exc:
        raise UsageError(str(exc))
    return _report(ev, pipeline.examine_log(ev, options.start_method), options)


def cmd_check(options):
    from doctor import lint
    from flake8_dlworker.notebook import is_notebook

    for stream in (sys.stdout, sys.stderr):  # a file name that is not UTF-8, escaped
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    for path in options.paths:
        if os.path.isdir(path):
            continue
        read_named(path)
        if is_notebook(path) and (options.fix or options.diff):
            raise UsageError("%s: check --fix and --diff patch Python files, not "
                             "notebooks; the findings say what to change" % path)
    argv = lint.flake8_argv(options.config, options.isolated, options.start_method)
    try:
        found = lint.run(options.paths, argv, options.exclude, options.extend_exclude)
        if options.fix:
            from doctor.patches.fix_static import fix_files

            signals.install()  # a signal stops the writing before the next file is replaced
            fix_files(found)
            if signals.received() is not None:
                return signals.exit_status()
            found = lint.run(options.paths, argv, options.exclude, options.extend_exclude)
    except ValueError as exc:  # flake8's configuration
        raise UsageError(str(exc))
    lint.say(found.problems)
    status = _check_output(found, options)
    return 0 if options.exit_zero else status


def _check_output(found, options):
    """Print the report in its format; the exit status of what it says."""
    start_method = found.options.dlw_start_method
    if options.diff:
        from doctor.patches.fix_static import diff_text

        sys.stdout.write(diff_text(found))
    elif options.format in ("sarif", "github"):
        from doctor import formats

        sys.stdout.write(formats.sarif_text(found.findings, found.problems)
                         if options.format == "sarif" else formats.github_text(found.findings))
    else:
        from doctor import report

        ev = Evidence(source="check", target=" ".join(options.paths),
                      start_method=start_method, outcome="passed")
        ev.static = found.findings
        diagnoses = [_static_diagnosis(finding) for finding in found.findings]
        if options.format == "json":
            report_json = json.loads(report.json_text(ev, diagnoses))
            report_json["skipped"] = [{"path": p.path, "cell": p.cell, "line": p.line,
                                       "reason": p.reason} for p in found.problems]
            sys.stdout.write(json.dumps(report_json, indent=2) + "\n")
        else:
            sys.stdout.write(report.Terminal(report.use_colour(sys.stdout)).render(
                ev, diagnoses))
    sys.stdout.flush()
    return check_status(found)


def check_status(found):
    """1 findings or a file that is not valid Python; 4 files not checked; else 0."""
    if found.findings or any(p.syntax for p in found.problems):
        return 1
    return 4 if found.problems else 0


def _static_diagnosis(finding):
    from doctor.diagnose import Diagnosis, finding_text, relative

    return Diagnosis(finding["code"], "possible", [finding_text(finding)],
                     path=relative(finding["path"]), line=finding["line"],
                     cell=finding.get("cell"))
