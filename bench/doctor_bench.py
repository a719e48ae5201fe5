"""The doctor's cost: ``python -m doctor SCRIPT`` against a plain forced-spawn run of
the same script (``tests/spawn_run.py``), on a passing fixture and on crashing ones.

Runs interleave (plain, doctor, plain, doctor, ...) so that machine noise hits both
alike; the table shows the median wall time of each and their ratio.

    python bench/doctor_bench.py [--repeat 5] [FIXTURE ...]
"""
import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from fixture_markers import find  # noqa: E402

SPAWN_RUN = ROOT / "tests" / "spawn_run.py"
DEFAULT = ("clean_good_script.py", "runtime/clean_two_loaders.py", "dlw102_collate.py",
           "dlw205_raise.py", "dlw203_segfault.py")


def timed(cmd, cwd):
    started = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("fixtures", nargs="*", default=DEFAULT)
    args = parser.parse_args()
    rows = []
    for name in args.fixtures:
        path = find(name)
        plain_cmd = [sys.executable, str(SPAWN_RUN), path.name]
        doctor_cmd = [sys.executable, "-m", "doctor", "--json", path.name]
        timed(plain_cmd, path.parent)  # warm the file cache once
        plain, doctor = [], []
        for _ in range(args.repeat):
            plain.append(timed(plain_cmd, path.parent))
            doctor.append(timed(doctor_cmd, path.parent))
        rows.append((name, statistics.median(plain), statistics.median(doctor)))
    print("%-32s %10s %10s %7s" % ("fixture", "spawn (s)", "doctor (s)", "ratio"))
    for name, plain, doctor in rows:
        print("%-32s %10.2f %10.2f %7.2f" % (name, plain, doctor, doctor / plain))
    print("median of %d interleaved runs each; ratio = doctor / plain spawn run" % args.repeat)


if __name__ == "__main__":
    main()
