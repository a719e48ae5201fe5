"""What the memory timeline costs: ``python -m doctor`` on passing scripts with the
timeline (the default) and without it (``DLW_DOCTOR_NO_TIMELINE=1``, a knob for this
bench only), the runs interleaved so that machine noise hits both alike; the table shows
the median wall time of each and their ratio. The target is at most +2 %.

    python bench/memory_bench.py [--repeat 7] [FIXTURE ...]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from fixture_markers import find  # noqa: E402

DEFAULT = ("clean_good_script.py", "runtime/clean_two_loaders.py")


def timed(cmd, cwd, env):
    started = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("fixtures", nargs="*", default=DEFAULT)
    args = parser.parse_args()
    with_timeline = dict(os.environ)
    with_timeline.pop("DLW_DOCTOR_NO_TIMELINE", None)
    without = dict(with_timeline, DLW_DOCTOR_NO_TIMELINE="1")
    print("%-32s %12s %12s %8s" % ("fixture", "without (s)", "with (s)", "cost"))
    for name in args.fixtures:
        path = find(name)
        cmd = [sys.executable, "-m", "doctor", "--json", path.name]
        timed(cmd, path.parent, without)  # warm the file cache once
        off, on = [], []
        for _ in range(args.repeat):
            off.append(timed(cmd, path.parent, without))
            on.append(timed(cmd, path.parent, with_timeline))
        a, b = statistics.median(off), statistics.median(on)
        print("%-32s %12.2f %12.2f %+7.1f%%" % (name, a, b, 100 * (b - a) / a))


if __name__ == "__main__":
    main()
