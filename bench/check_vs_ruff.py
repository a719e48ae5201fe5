"""``python -m doctor check`` against ``ruff check --select ALL`` on the same directories.

``check`` is timed in each of its formats (text, json, sarif, github): the analysis
is the same, so they should cost the same. Both are given the directories themselves
(each recurses on its own), both use every core, neither keeps a cache; the runs are
interleaved and the wall time of each is the median of --repeat runs, with the CPU
time (user + system, the command and its processes) beside it. The machine's load
average before and after is printed: on a shared machine the wall times move with it,
the ratios of interleaved runs much less. The corpus is the one bench/lint_bench.py
lints (a slice of the installed torch sources and torchvision) unless --corpus names
directories, e.g. a clone of huggingface/diffusers:

    python bench/check_vs_ruff.py [--all] [--repeat 5] [--corpus DIR ...] [--ruff PATH]
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lint_bench import corpus  # noqa: E402


def roots_of(args):
    """The directories to hand to both tools (not their files: each one recurses)."""
    if args.corpus:
        return [str(Path(p)) for p in args.corpus]
    from lint_bench import DEFAULT_SLICE, torch_dir

    base = torch_dir()
    roots = [str(base)] if args.all else [str(base / name) for name in DEFAULT_SLICE]
    try:
        import torchvision
        roots.append(os.path.dirname(torchvision.__file__))
    except ImportError:
        pass
    return roots


def timed(cmd):
    """(wall seconds, CPU seconds of the command and its processes)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit("%s failed (%d): %s" % (cmd[0], done.returncode, done.stderr[-2000:]))
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def load():
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every torch source file")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each (median)")
    parser.add_argument("--corpus", nargs="*", help="directories instead of torch")
    parser.add_argument("--ruff", help="the ruff to run (default: beside this Python, "
                                       "else on PATH)")
    args = parser.parse_args(argv)
    ruff = args.ruff or shutil.which("ruff", path=os.path.dirname(sys.executable)) \
        or shutil.which("ruff")
    if ruff is None:
        raise SystemExit("ruff is not installed here (pip install ruff)")
    roots = roots_of(args)
    files, lines = corpus(args)
    commands = {"doctor check --format %s" % fmt: [
        sys.executable, "-m", "doctor", "check", "--format", fmt, "--exit-zero", *roots]
        for fmt in ("text", "json", "sarif", "github")}
    commands["ruff check --select ALL"] = [ruff, "check", "--select", "ALL", "--no-cache",
                                           "--exit-zero", "--quiet", *roots]
    times = {name: [] for name in commands}
    cpu = {name: [] for name in commands}
    loads = [load()]
    for _ in range(args.repeat):
        for name, cmd in commands.items():  # interleaved: a busy moment hits both
            wall, used = timed(cmd)
            times[name].append(wall)
            cpu[name].append(used)
    loads.append(load())
    median = {name: statistics.median(t) for name, t in times.items()}
    version = subprocess.run([ruff, "--version"], capture_output=True, text=True).stdout
    print("corpus: %d files, %d lines, %d cores; %s" % (
        len(files), lines, os.cpu_count() or 1, version.strip()))
    print("before: %s; after: %s" % tuple(loads))
    print("%-30s %10s %10s %10s %8s" % ("", "median s", "min s", "CPU s", "/ ruff"))
    for name in commands:
        print("%-30s %10.3f %10.3f %10.3f %8.2f" % (
            name, median[name], min(times[name]), statistics.median(cpu[name]),
            median[name] / median["ruff check --select ALL"]))
    print("text / sarif: %.2f" % (median["doctor check --format text"]
                                  / median["doctor check --format sarif"]))


if __name__ == "__main__":
    main()
