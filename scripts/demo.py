"""`make demo`: the doctor on a crashing example, then flake8 on the same file.

1. ``python -m doctor flake8_dlworker/causes/DLW102/invalid/dlw102_collate.py``: the
   script (one of DLW102's examples) runs under a forced spawn start method, crashes as
   it would on Windows or macOS, and the doctor names the root cause with its evidence
   and the line to fix.
2. ``flake8 --select DLW`` on the same file: the static side finds it before any run.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = "flake8_dlworker/causes/DLW102/invalid/dlw102_collate.py"


def main():
    print("$ python -m doctor %s\n" % FIXTURE, flush=True)
    doctor = subprocess.run([sys.executable, "-m", "doctor", FIXTURE], cwd=ROOT)
    if doctor.returncode not in (0, 1):
        sys.exit("the doctor failed (exit status %d)" % doctor.returncode)
    print("\n$ flake8 --select DLW %s\n" % FIXTURE, flush=True)
    lint = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "DLW",
                           FIXTURE], cwd=ROOT)
    if lint.returncode not in (0, 1):
        sys.exit("flake8 failed (exit status %d)" % lint.returncode)
    print("\nThe same code, DLW102, before the crash (flake8) and after it (the doctor).")
    print("Full docs: docs/rules.md")


if __name__ == "__main__":
    main()
