"""The doctor's cost: ``python -m doctor SCRIPT`` against a plain forced-spawn run of
the same script (``tests/spawn_run.py``), on a passing fixture and on crashing ones;
and on a passing distributed run (``distributed/clean_ddp.py``: two ranks on gloo, two
workers each), ``python -m doctor torchrun ...`` against ``torchrun`` running each rank
under ``tests/spawn_run.py``, and against plain ``torchrun``.

Runs interleave (plain, doctor, plain, doctor, ...) so that machine noise hits both
alike; the table shows the median wall time of each, the ratio of the medians, and the
median of the ratios of each pair (``paired``).

    python bench/doctor_bench.py [--repeat 5] [--start-method fork] [FIXTURE ...]

The doctor forces spawn on every DataLoader by default, where plain ``torchrun`` on
Linux gives its ranks' workers fork: each spawned worker imports torch again, which the
doctor's run pays and plain ``torchrun`` does not; the forced-spawn launcher run pays it
too, and the ratio to it is the cost of watching. ``--start-method fork`` (the doctor's
option, given to its runs) forces what plain ``torchrun`` has (the doctor then also
reads each forked worker's private memory, as in any fork run).

The doctor's modules are byte-compiled before the runs (:func:`compiled`), as an
installed package's are, and each command runs once untimed first.
"""
import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from fixture_markers import LAUNCHER, find, launched  # noqa: E402

SPAWN_RUN = ROOT / "tests" / "spawn_run.py"
DEFAULT = ("clean_good_script.py", "runtime/clean_two_loaders.py", "dlw102_collate.py",
           "dlw205_raise.py", "dlw203_segfault.py", "distributed/clean_ddp.py")


def timed(cmd, cwd):
    started = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def compiled():
    """Byte-compile the doctor's own modules first, as ``pip install`` does: torch's are,
    and with ``PYTHONDONTWRITEBYTECODE`` set (or a read-only checkout) an editable
    install would compile the doctor's from source in every process of every run."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "doctor"),
                    str(ROOT / "flake8_dlworker")], check=True, stdout=subprocess.DEVNULL)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--start-method", default="spawn",
                        help="the doctor's --start-method (default: spawn)")
    parser.add_argument("fixtures", nargs="*", default=DEFAULT)
    args = parser.parse_args()
    rows = []
    compiled()
    method = ["--start-method", args.start_method] if args.start_method != "spawn" else []
    for name in args.fixtures:
        path = find(name)
        doctor_cmd = [sys.executable, "-m", "doctor", "--json", *method, path.name]
        plain_cmds = {"": [sys.executable, str(SPAWN_RUN), path.name]}
        if launched(path):  # the launcher: each rank forced to spawn, and as it comes
            doctor_cmd[-1:] = LAUNCHER + [path.name]
            plain_cmds = {" (torchrun, spawn)": [sys.executable, *LAUNCHER, str(SPAWN_RUN),
                                                 path.name],
                          " (plain torchrun)": [sys.executable, *LAUNCHER, path.name]}
        for cmd in [*plain_cmds.values(), doctor_cmd]:
            timed(cmd, path.parent)  # warm the file cache once, for each alike
        plain = {label: [] for label in plain_cmds}
        doctor = []
        for _ in range(args.repeat):
            for label, cmd in plain_cmds.items():
                plain[label].append(timed(cmd, path.parent))
            doctor.append(timed(doctor_cmd, path.parent))
        for label, times in plain.items():
            rows.append((name + label, statistics.median(times), statistics.median(doctor),
                         statistics.median(d / p for p, d in zip(times, doctor))))
    print("%-48s %10s %10s %7s %7s" % ("fixture", "plain (s)", "doctor (s)", "ratio",
                                       "paired"))
    for name, plain, doctor, paired in rows:
        print("%-48s %10.2f %10.2f %7.2f %7.2f" % (name, plain, doctor, doctor / plain, paired))
    print("median of %d interleaved runs each; ratio = doctor / plain run (forced spawn; "
          "for distributed/, the launcher with each rank forced to spawn, and the plain "
          "launcher); paired = median of the ratios of each pair" % args.repeat)


if __name__ == "__main__":
    main()
