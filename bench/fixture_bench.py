"""The ``dataloader_doctor`` fixture's cost per check, old way and new way, in one run.

A generated test module of 11 loader tests (5 passing loaders with 2 workers, 5 that
the in-process pickle probe refuses, 1 whose dataset cannot be rebuilt in a worker)
runs under pytest twice, alternately: with ``--dlw-fresh-workers`` (every check spawns
new interpreters that import torch: the fixture before the warm server) and without it
(workers forked from the warm server).  Each check is timed inside the test; the
table shows the first passing check (it starts the server), the median of the other
passing checks, the median refused check, the worker-side failure, and the whole
pytest run.

    python bench/fixture_bench.py [--repeat 1]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = '''
import json
import os
import os
import time

import pytest
import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        return torch.tensor(float(i * i))


class Unrestorable(Squares):
    def __init__(self):
        self.path = "data"

    def __setstate__(self, state):
        raise ValueError("cannot reopen %s here" % state["path"])


def _timed(kind, dataloader_doctor, loader):
    started = time.perf_counter()
    try:
        dataloader_doctor.check(loader)
    finally:
        with open(os.environ["DLW_BENCH_RECORD"], "a") as f:
            f.write(json.dumps([kind, time.perf_counter() - started]) + "\\n")


@pytest.mark.parametrize("i", range(5))
def test_passing(dataloader_doctor, i):
    _timed("pass", dataloader_doctor, DataLoader(Squares(), batch_size=4, num_workers=2))


@pytest.mark.parametrize("i", range(5))
def test_refused(dataloader_doctor, i):
    _timed("refused", dataloader_doctor,
           DataLoader(Squares(), num_workers=2, collate_fn=lambda b: b))


def test_fails_in_the_worker(dataloader_doctor):
    _timed("worker", dataloader_doctor, DataLoader(Unrestorable(), num_workers=1))
'''

MODES = (("old: fresh spawn", ["--dlw-fresh-workers"]), ("new: warm server", []))


def run_module(folder, extra):
    record = folder / "record.jsonl"
    record.write_text("")
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         *extra, "test_loaders.py"], cwd=folder, capture_output=True, text=True,
        env=dict(os.environ, DLW_BENCH_RECORD=str(record)))
    wall = time.perf_counter() - started
    if "6 failed, 5 passed" not in proc.stdout:
        sys.exit("unexpected pytest outcome:\n" + proc.stdout[-3000:])
    rows = [json.loads(line) for line in record.read_text().splitlines()]
    passing = [t for kind, t in rows if kind == "pass"]
    return {"first": passing[0], "pass": statistics.median(passing[1:]),
            "refused": statistics.median(t for kind, t in rows if kind == "refused"),
            "worker": [t for kind, t in rows if kind == "worker"][0], "wall": wall}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    results = {name: [] for name, _ in MODES}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_loaders.py").write_text(TESTS)
        for _ in range(args.repeat):
            for name, extra in MODES:  # alternate, so machine noise hits both alike
                results[name].append(run_module(folder, extra))
    columns = ("first", "pass", "refused", "worker", "wall")
    print("%-18s %12s %12s %12s %12s %12s" % (
        "fixture", "1st pass (s)", "pass (s)", "refused (s)", "worker (s)", "11 tests (s)"))
    for name, _ in MODES:
        medians = [statistics.median(r[c] for r in results[name]) for c in columns]
        print("%-18s %12.2f %12.2f %12.3f %12.2f %12.1f" % (name, *medians))
    print("per check, timed inside the test; pass = median of checks 2-5; "
          "median of %d run(s) per mode" % args.repeat)


if __name__ == "__main__":
    main()
