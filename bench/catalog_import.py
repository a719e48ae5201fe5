"""What importing the flake8 plugin costs, this tree against a git revision, in one run.

Each sample is a fresh interpreter that times ``import flake8_dlworker.catalog`` and then
``import flake8_dlworker.plugin`` (what flake8 pays before its first file) with the
tree first on ``sys.path``. The revision is exported with ``git archive`` into a
temporary folder. Median of the samples, interleaved so that load on the machine falls
on both alike.

    python bench/catalog_import.py [--ref HEAD~1] [--samples 30]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = (
    "import sys, time\n"
    "t0 = time.perf_counter()\n"
    "import flake8_dlworker.catalog\n"
    "t1 = time.perf_counter()\n"
    "import flake8_dlworker.plugin\n"
    "t2 = time.perf_counter()\n"
    "assert flake8_dlworker.catalog.__file__.startswith(sys.argv[1]), "
    "flake8_dlworker.catalog.__file__\n"
    "print(t1 - t0, t2 - t0)\n"
)


def _export(ref, folder):
    archive = subprocess.run(["git", "archive", ref, "flake8_dlworker"], cwd=ROOT,
                             check=True, capture_output=True).stdout
    path = Path(folder) / "tree.tar"
    path.write_bytes(archive)
    with tarfile.open(path) as tar:
        tar.extractall(folder)


def _sample(tree):
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="")
    out = subprocess.run([sys.executable, "-c", PROBE, str(tree)], env=env, check=True,
                         capture_output=True, text=True, cwd=tree).stdout.split()
    return float(out[0]), float(out[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", default="HEAD", help="git revision to compare with")
    parser.add_argument("--samples", type=int, default=30)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="catalog-import-") as folder:
        _export(options.ref, folder)
        trees = {"this tree": ROOT, options.ref: Path(folder)}
        for tree in trees.values():  # write the .pyc files before timing
            _sample(tree)
        times = {name: [] for name in trees}
        for _ in range(options.samples):
            for name, tree in trees.items():
                times[name].append(_sample(tree))
    print("| tree | import catalog (ms) | import plugin (ms) |")
    print("|---|---|---|")
    for name, samples in times.items():
        catalog = statistics.median(s[0] for s in samples) * 1000
        plugin = statistics.median(s[1] for s in samples) * 1000
        print("| %s | %.2f | %.2f |" % (name, catalog, plugin))
    base = statistics.median(s[1] for s in times[options.ref])
    this = statistics.median(s[1] for s in times["this tree"])
    print("\nplugin import, this tree / %s: %.2f" % (options.ref, this / base))


if __name__ == "__main__":
    main()
