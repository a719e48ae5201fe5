"""``python -m doctor check`` against ``ruff check --select ALL`` on the same directories.

``check`` is timed in each of its formats (text, json, sarif, github): the analysis
is the same, so they should cost the same. Both are given the directories themselves
(each recurses on its own), both use every core, neither keeps a cache; the runs are
interleaved and the wall time of each is the median of --repeat runs. The corpus is the
one bench/lint_bench.py lints (a slice of the installed torch sources and torchvision)
unless --corpus names directories.

    python bench/check_vs_ruff.py [--all] [--repeat 5] [--corpus DIR ...]
"""
import argparse
import os
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
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit("%s failed (%d): %s" % (cmd[0], done.returncode, done.stderr[-2000:]))
    return elapsed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every torch source file")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each (median)")
    parser.add_argument("--corpus", nargs="*", help="directories instead of torch")
    args = parser.parse_args(argv)
    ruff = shutil.which("ruff", path=os.path.dirname(sys.executable)) or shutil.which("ruff")
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
    for _ in range(args.repeat):
        for name, cmd in commands.items():  # interleaved: a busy moment hits both
            times[name].append(timed(cmd))
    median = {name: statistics.median(t) for name, t in times.items()}
    print("corpus: %d files, %d lines, %d cores" % (len(files), lines, os.cpu_count() or 1))
    print("%-30s %10s %10s %8s" % ("", "median s", "min s", "/ ruff"))
    for name in commands:
        print("%-30s %10.3f %10.3f %8.2f" % (name, median[name], min(times[name]),
                                             median[name] / median["ruff check --select ALL"]))


if __name__ == "__main__":
    main()
