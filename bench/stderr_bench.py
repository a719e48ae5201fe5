"""What the doctor costs on a script that prints much: 500,000 lines on stderr, every one
passed through and parsed. CPU seconds of the plain script and of the script under
``python -m doctor`` (the doctor's own process included), the runs interleaved so that
machine noise hits both alike; the table shows the median of each and their ratio.

    python bench/stderr_bench.py [--repeat 3] [--lines 500000]
"""
import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT = """\
import sys
for i in range({lines}):
    print("epoch 1 step %d loss 0.25" % i, file=sys.stderr)
"""


def cpu_seconds(command, cwd):
    """CPU seconds of ``command`` and of every process it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lines", type=int, default=500000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "noisy.py").write_text(SCRIPT.format(lines=options.lines))
        plain, doctor = [], []
        for _ in range(options.repeat):
            plain.append(cpu_seconds([sys.executable, "noisy.py"], folder))
            doctor.append(cpu_seconds([sys.executable, "-m", "doctor", "noisy.py"], folder))
    print("| %d stderr lines | CPU s, median of %d |" % (options.lines, options.repeat))
    print("|---|---|")
    print("| python noisy.py | %.2f |" % statistics.median(plain))
    print("| python -m doctor noisy.py | %.2f |" % statistics.median(doctor))
    print("| ratio | %.2f |" % (statistics.median(doctor) / statistics.median(plain)))


if __name__ == "__main__":
    main()
