"""How fast ``python -m doctor explain`` reads a big log, and how much memory it takes.

Builds logs of several sizes from what long training logs hold (timestamped log lines,
tqdm bars rewritten with carriage returns, ANSI colour, repeated warnings, worker
tracebacks from earlier epochs, rank prefixes) with the real crash at the end, plus one
pathological log: a progress bar rewritten with ``\\r`` for hours, never a newline.
and the worst case, 10 MB of nothing but tracebacks.  Then, for each, prints a table:

- ``parse s``: explain() + diagnosed() in this process (best of 3), the part that
  grows with the log;
- ``cli s``: the whole ``python -m doctor explain --json LOG`` in a subprocess,
  interpreter start and imports included (best of 3);
- ``peak RSS``: the subprocess's peak resident memory (wait4), which must not grow with
  the log: the log is streamed in fixed-size chunks.

Then the accuracy on a folder of logs (default tests/logs): each file's name says its
expected root cause before the double underscore (``dlw205__...``, ``generic__...``,
``none__...``) and ``locations.tsv`` there gives the location the report must give
(``path:line`` of the user's frame, or ``-`` where the log names none).  It prints the
share of logs whose root cause comes first and of logs with a user frame whose location is
right, and lists the misses.

Usage: python bench/explain_bench.py [--sizes 1,10,50] [--keep DIR] [--logs DIR]
                                     [--accuracy-only]
The acceptance bar of the 10 MB log is 0.5 s for the parse; the row says whether it held.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from doctor.diagnose import relative  # noqa: E402
from doctor.explain import explain  # noqa: E402
from doctor.pipeline import diagnosed  # noqa: E402

LOGS = os.path.join(ROOT, "tests", "logs")
BAR = 0.5  # seconds for the 10 MB log


def _crash_tail():
    with open(os.path.join(LOGS, "dlw205__linux_keyerror_worker1_timestamps.log")) as handle:
        return handle.read()


def _noise_block(rng, epoch):
    """About 8 KB of what a training run prints between crashes."""
    out = []
    for step in range(0, 40):
        out.append("2024-05-02 14:%02d:%02d,%03d - INFO - epoch %d step %d loss %.4f lr %.2e\n" % (
            step % 60, (step * 7) % 60, step * 13 % 1000, epoch, step * 50,
            rng.random(), 3e-4 * rng.random()))
    frame = "\r\x1b[32mEpoch %d\x1b[0m: %3d%%|%-20s| %d/400 [00:%02d<01:10, 5.71it/s, loss=%.3f]"
    bar = "".join(frame % (epoch, i // 4, "#" * (i // 20), i, i // 6, rng.random())
                  for i in range(0, 400, 9))
    out.append(bar + "\n")
    out.append("[rank0]: /opt/venv/lib/python3.11/site-packages/torch/utils/data/"
               "dataloader.py:617: UserWarning: This DataLoader will create 16 worker "
               "processes in total. Our suggested "
               "max number of worker in current system is 8, which is smaller than what this "
               "DataLoader is going to create.\n")
    out.append("[rank0]:   warnings.warn(\n")
    return "".join(out)


def build_log(path, megabytes, seed=0):
    rng = random.Random(seed)
    target = megabytes * 1024 * 1024
    tail = _crash_tail()
    with open(path, "w", encoding="utf-8") as handle:
        size = 0
        epoch = 0
        while size < target - len(tail):
            block = _noise_block(rng, epoch)
            handle.write(block)
            size += len(block)
            epoch += 1
        handle.write(tail)


def build_one_line(path, megabytes):
    """A progress bar rewritten with \\r and never ended, then the crash."""
    with open(path, "w", encoding="utf-8") as handle:
        size = 0
        i = 0
        while size < megabytes * 1024 * 1024:
            piece = "\r  %3d%%|%-30s| %d/1000000 [12:%02d<88:00, 180it/s]" % (
                i % 100, "#" * (i % 30), i, i % 60)
            handle.write(piece)
            size += len(piece)
            i += 1
        handle.write("\n" + _crash_tail())


def build_all_tracebacks(path, megabytes):
    """The worst case: nothing but worker tracebacks and warnings (every rank of a big job
    printing the same crash, again and again), so no stretch can be skipped."""
    with open(os.path.join(LOGS, "dlw110__macos_too_many_workers_warning_no_crash.log")) as h:
        block = _crash_tail() + h.read()
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(block * (megabytes * 1024 * 1024 // len(block)))


def best(fn, runs=3):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def parse(path):
    ev = explain(path)
    return diagnosed(ev)


def cli(path):
    """(seconds, peak RSS in MiB, first code) for the CLI in a subprocess."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "doctor", "explain", "--json", path],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read()
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    rss_mib = usage.ru_maxrss / 1024.0  # Linux: KiB
    code = None
    if b'"code": "' in out:
        code = out.split(b'"code": "', 1)[1].split(b'"', 1)[0].decode()
    return seconds, rss_mib, code


def expected_locations(folder):
    """{log name: "path:line" or "-"} from the folder's locations.tsv."""
    found = {}
    path = os.path.join(folder, "locations.tsv")
    if not os.path.exists(path):
        return found
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip() and not line.startswith("#"):
                name, where = line.rstrip("\n").split("\t")
                found[name] = where
    return found


def judge(name, found, want_location):
    """(root cause right, location right or None where the log names no user frame)."""
    want = name.split("__", 1)[0]
    if want == "none":
        cause = not found
    elif want == "generic":
        cause = bool(found) and all(d.confidence == "possible" for d in found)
    else:
        cause = bool(found) and found[0].code == want.upper()
    if want_location in (None, "-"):
        return cause, None
    path, line = want_location.rsplit(":", 1)
    got = (found[0].path, found[0].line) if found else (None, None)
    return cause, got == (relative(path), int(line))


def accuracy(folder):
    locations = expected_locations(folder)
    names = sorted(n for n in os.listdir(folder) if n.endswith(".log"))
    causes, placed, located, misses = 0, 0, 0, []
    for name in names:
        found = diagnosed(explain(os.path.join(folder, name)))
        cause, place = judge(name, found, locations.get(name))
        causes += cause
        if place is not None:
            located += 1
            placed += place
        if not cause or place is False:
            misses.append("  %s: got %s at %s:%s, want %s" % (
                name, found[0].code if found else "nothing", found[0].path if found else "-",
                found[0].line if found else "-", locations.get(name, "?")))
    print("root cause first: %d of %d logs (%.1f %%)" % (
        causes, len(names), 100.0 * causes / max(1, len(names))))
    print("location right:   %d of %d logs that name a user frame (%.1f %%)" % (
        placed, located, 100.0 * placed / max(1, located)))
    if misses:
        print("misses:\n" + "\n".join(misses))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,10,50", help="log sizes in MB (default 1,10,50)")
    parser.add_argument("--keep", help="write the logs here and keep them")
    parser.add_argument("--logs", default=LOGS, help="the folder of named logs to score")
    parser.add_argument("--accuracy-only", action="store_true", help="skip the timings")
    args = parser.parse_args()
    os.chdir(ROOT)
    if not args.accuracy_only:
        speed(args)
    accuracy(args.logs)


def speed(args):
    sizes = [int(s) for s in args.sizes.split(",") if s]
    folder = args.keep or tempfile.mkdtemp(prefix="explain-bench-")
    os.makedirs(folder, exist_ok=True)
    cases = []
    for megabytes in sizes:
        path = os.path.join(folder, "train_%dmb.log" % megabytes)
        build_log(path, megabytes)
        cases.append(("%d MB training log" % megabytes, path))
    path = os.path.join(folder, "one_line_20mb.log")
    build_one_line(path, 20)
    cases.append(("20 MB in one \\r line", path))
    path = os.path.join(folder, "tracebacks_10mb.log")
    build_all_tracebacks(path, 10)
    cases.append(("10 MB all tracebacks", path))

    print("%-24s %9s %9s %9s %11s %8s %s" % (
        "log", "size MB", "parse s", "cli s", "peak RSS", "code", "bar"))
    for name, path in cases:
        size = os.path.getsize(path) / 1024.0 / 1024.0
        parse_s, found = best(lambda: parse(path))
        cli_runs = [cli(path) for _ in range(3)]
        cli_s = min(r[0] for r in cli_runs)
        rss = max(r[1] for r in cli_runs)
        code = cli_runs[0][2]
        assert found and found[0].code == code, (found, code)
        bar = ""
        if name == "10 MB training log":
            bar = "parse <= %.1f s: %s" % (BAR, "held" if parse_s <= BAR else "MISSED")
        print("%-24s %9.1f %9.3f %9.3f %8.1f MiB %8s %s" % (
            name, size, parse_s, cli_s, rss, code, bar))
    if not args.keep:
        for _, path in cases:
            os.remove(path)
        os.rmdir(folder)


if __name__ == "__main__":
    main()
