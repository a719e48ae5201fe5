"""Recorded real runs: each fixture's run under the doctor, kept so that the fast tier
can replay it through the diagnosis without starting torch.

A recording is what the doctor's supervisor saw (the evidence record: events, output
lines, exceptions, worker exits, stacks, memory), the doctor's exit status and what it
printed on stderr, taken from a real ``python -m doctor --json`` run of the fixture.
Each carries a fingerprint of the fixture's text (and of the modules it imports beside
it), the torch version and the Python version: when any of them changes, the recording
is stale, and the fast tier fails and names the command that records it again::

    python tests/recordings.py                 # every missing or stale recording
    python tests/recordings.py --all           # every recording
    python tests/recordings.py dlw102_collate.py dlw206_hang.py

A few programs are also recorded under other options (:data:`VARIANTS`: the
copy-on-access fixture under ``--start-method fork``), in ``NAME.VARIANT.json``.

The full tier (``make test-all``) still runs every fixture for real
(``tests/test_doctor_fixtures.py``).
"""
import hashlib
import json
import os
import platform
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixture_markers import (  # noqa: E402
    FIXTURES, LAUNCHER, ROOT, launched, modules_beside, run_files, short)
from tiers import starts_torch  # noqa: E402

FOLDER = Path(__file__).resolve().parent / "recordings"
COMMAND = "python tests/recordings.py"
#: the root of this checkout in a recording, so that it replays in any other checkout
ROOT_MARK = "<root>"
#: how much of the doctor's stderr a recording keeps (its end)
OUTPUT_CHARS = 60000
#: fixtures that hang instead of crashing (a worker waits forever): the doctor's
#: --timeout ends them (the hang must outlast the start of torch and its worker by
#: doctor.diagnose.STUCK_S on a loaded machine too)
TIMEOUTS = {"dlw206_hang.py": 40}
#: runs recorded beside a fixture's own, under other options: {name: (variant, options)}
VARIANTS = {"dlw210_fork_copy_on_access.py": ("fork", ["--start-method", "fork"])}


def cases():
    """(target args, cwd, path) of every program the doctor runs in the fixture tests."""
    for path in run_files():
        if path.name == "__main__.py":
            yield ["-m", path.parent.name], FIXTURES, path
        elif launched(path):
            yield LAUNCHER + [path.name], path.parent, path
        else:
            yield [path.name], path.parent, path


def variant_cases():
    """(target, cwd, path, variant) of every run recorded under other options."""
    for target, cwd, path in cases():
        if path.name in VARIANTS:
            yield target, cwd, path, VARIANTS[path.name][0]


def doctor_args(path, target, variant=None):
    args = ["--json"]
    if path.name in TIMEOUTS:
        args += ["--timeout", str(TIMEOUTS[path.name])]
    if variant is not None:
        args += VARIANTS[path.name][1]
    return args + list(target)


def fingerprint(path):
    """sha256 of the program's text and its modules beside it, torch's and Python's
    versions: what a recorded run depends on besides the doctor."""
    digest = hashlib.sha256()
    for source in [path] + modules_beside(path):
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    versions = "torch %s python %s" % (_torch_version(), platform.python_version_tuple()[:2])
    digest.update(versions.encode())
    return digest.hexdigest()


def _torch_version():
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def file_of(path, variant=None):
    name = short(path).replace("/", "__").replace(".py", "")
    return FOLDER / (name + ("." + variant if variant else "") + ".json")


class Stale(Exception):
    """A recording is missing or does not match the fixture, torch or Python."""


def load(path, variant=None):
    """The recording of ``path`` (under the options of ``variant``), with this checkout's
    root in its paths; raises :class:`Stale`, naming the command that records it again."""
    where = file_of(path, variant)
    name = path.parent.name if path.name == "__main__.py" else path.name
    if not where.is_file():
        raise Stale("no recorded run of %s: record it with `%s %s`" % (short(path), COMMAND, name))
    data = json.loads(where.read_text(encoding="utf-8").replace(
        json.dumps(ROOT_MARK)[1:-1], json.dumps(str(ROOT))[1:-1]))
    if data["fingerprint"] != fingerprint(path):
        raise Stale("the recorded run of %s is stale (the fixture, torch or Python changed): "
                    "record it again with `%s %s`" % (short(path), COMMAND, name))
    return data


@starts_torch
def record(target, cwd, path, variant=None):
    """Run the doctor on one program for real and write its recording."""
    from doctor_run import run_doctor
    from doctor.supervisor import SAVE_EVIDENCE

    with tempfile.TemporaryDirectory() as folder:
        saved = os.path.join(folder, "evidence.json")
        status, report, _out, output, left = run_doctor(
            doctor_args(path, target, variant), cwd, env={SAVE_EVIDENCE: saved})
        if left:
            raise RuntimeError("%s left processes behind: %s" % (short(path), left))
        with open(saved, encoding="utf-8") as handle:
            evidence = json.load(handle)
    data = {"fingerprint": fingerprint(path), "program": short(path), "target": target,
            "status": status, "outcome": report and report["outcome"],
            "output": output[-OUTPUT_CHARS:], "evidence": evidence}
    text = json.dumps(data, indent=1, sort_keys=True).replace(
        json.dumps(str(ROOT))[1:-1], json.dumps(ROOT_MARK)[1:-1])
    FOLDER.mkdir(exist_ok=True)
    file_of(path, variant).write_text(text + "\n", encoding="utf-8")
    return short(path) + (" (%s)" % variant if variant else "")


def main(argv):
    everything = "--all" in argv
    names = [a for a in argv if not a.startswith("--")]
    todo = []
    every = [case + (None,) for case in cases()] + list(variant_cases())
    for target, cwd, path, variant in every:
        name = path.parent.name if path.name == "__main__.py" else path.name
        if names and name not in names:
            continue
        if not names and not everything:
            try:
                load(path, variant)
                continue
            except Stale:
                pass
        todo.append((target, cwd, path, variant))
    unknown = set(names) - {p.parent.name if p.name == "__main__.py" else p.name
                            for _t, _c, p in cases()}
    if unknown:
        print("no such program: %s" % ", ".join(sorted(unknown)), file=sys.stderr)
        return 2
    jobs = int(os.environ.get("JOBS") or os.cpu_count() or 1)
    print("recording %d run(s), %d at a time" % (len(todo), jobs), file=sys.stderr)
    with ThreadPoolExecutor(jobs) as pool:
        for done in pool.map(lambda case: record(*case), todo):
            print("recorded", done, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
