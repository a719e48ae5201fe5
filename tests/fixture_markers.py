"""The example programs the tests run, and the findings their markers promise.

One set: every cause's examples live in its catalog folder,
``flake8_dlworker/causes/<CODE>/invalid/`` and ``valid/``. A numbered example
(``01.py``) is a documented one: the docs show it and the rule tests check it for its
cause's code. A named one (``dlw102_collate.py``, ``clean_eager_map.py``) is a whole
scenario: its ``# DLW1xx: COL`` markers are every finding flake8 must print for it, a
``# doctor: DLW2xx`` marker the line the doctor must name, and the doctor runs it under
spawn. ``fixtures/`` keeps only the programs that are no single cause's example: several
causes in one script, a cause across two modules, a package, notebooks, and the runs the
doctor compares under fork (``fixtures/runtime/``).

Examples import what they share (``example_data``, ``tiny_hf``) from the causes folder:
run one with ``PYTHONPATH=flake8_dlworker/causes``.
"""
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CAUSES = ROOT / "flake8_dlworker" / "causes"
FIXTURES = ROOT / "fixtures"
#: whole runs that are no cause's example; flake8 has nothing to say about them
RUNTIME = FIXTURES / "runtime"
#: distributed runs: two ranks on gloo; a program whose docstring says ``python -m doctor
#: torchrun`` runs under the launcher (:data:`LAUNCHER`), the others (``mp.spawn``) as
#: a script
DISTRIBUTED = FIXTURES / "distributed"
LAUNCHER = ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
MARKER = re.compile(r"#\s*(DLW\d{3}):\s*(\d+)")
_DOCUMENTED = re.compile(r"^\d+\.py$")


def scenario_examples(codes=None):
    """The named examples of every cause (or of ``codes``), in path order."""
    return sorted(p for p in CAUSES.glob("DLW*/*/*.py")
                  if p.parent.name in ("invalid", "valid") and not _DOCUMENTED.match(p.name)
                  and (codes is None or p.parts[-3] in codes))


def fixture_files():
    """Every program whose markers flake8 is held to: the named examples and the
    programs of ``fixtures/`` outside ``runtime/``."""
    return sorted(scenario_examples() + [
        p for p in FIXTURES.rglob("*.py")
        if p.name != "__init__.py" and RUNTIME not in p.parents])


def run_files():
    """Every program the doctor runs under spawn in the fixture tests."""
    return fixture_files() + sorted(RUNTIME.glob("*.py"))


def launched(path):
    """Whether the doctor runs ``path`` under the launcher, in two ranks."""
    path = Path(path)
    return DISTRIBUTED in path.parents and "python -m doctor torchrun" in path.read_text()


def find(name):
    """The one program of the set called ``name`` (``dlw102_collate.py``), or
    ``runtime/NAME`` under ``fixtures/``."""
    if "/" in name:
        return FIXTURES / name
    found = [p for p in run_files() if p.name == name] + \
        [p for p in CAUSES.glob("*.py") if p.name == name]
    if len(found) != 1:
        raise LookupError("%d programs are called %s" % (len(found), name))
    return found[0]


def folder(name):
    """The folder that holds the program called ``name``: where the doctor runs it."""
    return find(name).parent


def short(path):
    """``DLW102/invalid/dlw102_collate.py`` or ``fixtures/multi_three_causes.py``."""
    path = Path(path)
    return (path.relative_to(CAUSES) if CAUSES in path.parents
            else path.relative_to(ROOT)).as_posix()


def example_env(env=None):
    """``env`` (or this process's environment) with the causes folder on PYTHONPATH,
    where the examples' shared modules are."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CAUSES), env.get("PYTHONPATH")]))
    return env


def expected_findings(path):
    """{(line, col, code)} from the markers in one fixture."""
    found = set()
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        for code, col in MARKER.findall(line):
            found.add((lineno, int(col), code))
    return found


def modules_beside(path):
    """The modules the program imports from its own folder (``loaders_beside.py``) or
    from the causes folder (``tiny_hf.py``): a copy of the program needs them beside it."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        for name in names:
            for folder in (path.parent, CAUSES):
                beside = folder / (name.split(".")[0] + ".py")
                if beside.is_file() and beside != path and beside not in found:
                    found.append(beside)
                    break
    return found
