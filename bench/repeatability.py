"""Does the same crash give the same diagnosis every time?

Every crashing fixture runs N times under ``python -m doctor --json``, two runs at a
time (``--jobs``) so that the runs load the machine as a busy CI would; the table shows,
for each fixture, every distinct first answer seen as (code, line, confidence) and how
often.  The target is one answer per fixture.

    python bench/repeatability.py [--runs 10] [--jobs 2] [FIXTURE ...]
"""
import argparse
import collections
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fixture_markers import FIXTURES, run_files, short  # noqa: E402
from test_doctor_fixtures import TIMEOUTS, expected  # noqa: E402


def crashing_fixtures():
    """(name, target, cwd, extra options) of every fixture the doctor must diagnose."""
    for path in run_files():
        if expected(path) is None:
            continue
        options = ["--timeout", str(TIMEOUTS[path.name])] if path.name in TIMEOUTS else []
        if path.name == "__main__.py":
            yield path.parent.name, options + ["-m", path.parent.name], FIXTURES
        else:
            yield short(path), options + [path.name], path.parent


def answer(target, cwd):
    """The first diagnosis of one run, as (code, line, confidence), or what went wrong."""
    proc = subprocess.run([sys.executable, "-m", "doctor", "--json", *target], cwd=cwd,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=600)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        return ("no report, exit %d" % proc.returncode,)
    if not report["diagnoses"]:
        return ("none", report["outcome"])
    first = report["diagnoses"][0]
    return first["code"], first["line"], first["confidence"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per fixture (default 10)")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    parser.add_argument("fixtures", nargs="*", help="fixture names (default: every crashing one)")
    args = parser.parse_args()
    cases = [c for c in crashing_fixtures() if not args.fixtures or c[0] in args.fixtures]
    if not cases:
        parser.error("no such crashing fixture: %s" % " ".join(args.fixtures))
    jobs = [(name, target, cwd) for name, target, cwd in cases for _ in range(args.runs)]

    def one(job):
        got = answer(job[1], job[2])
        print("%s: %s" % (job[0], ", ".join(map(str, got))), file=sys.stderr, flush=True)
        return job[0], got

    with ThreadPoolExecutor(args.jobs) as pool:  # each answer on stderr as it comes
        answers = list(pool.map(one, jobs))
    seen = collections.OrderedDict((name, collections.Counter()) for name, _t, _c in cases)
    for name, got in answers:
        seen[name][got] += 1
    stable = 0
    print("%-40s %8s  %s" % ("fixture", "answers", "(code, line, confidence) x times"))
    for name, counts in seen.items():
        stable += len(counts) == 1
        shown = "; ".join("%s x%d" % (", ".join(map(str, got)), n) for got, n in counts.items())
        print("%-40s %8d  %s" % (name, len(counts), shown))
    print("%d of %d fixtures gave one answer over %d runs each, %d at a time"
          % (stable, len(seen), args.runs, args.jobs))
    return 0 if stable == len(seen) else 1


if __name__ == "__main__":
    sys.exit(main())
