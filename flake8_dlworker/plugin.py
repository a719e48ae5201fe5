"""The flake8 entry point: options, the prefilter, and the findings of every rule."""
import gc
import importlib
from typing import NamedTuple, Optional

import flake8_dlworker
from flake8_dlworker import catalog
from flake8_dlworker.analysis import analyze_module
from flake8_dlworker.analysis.loaders import is_dataloader_call, may_have_workers
from flake8_dlworker.analysis.project import Project, reaches_sibling_workers
from flake8_dlworker.analysis.triggers import might_start_workers
from flake8_dlworker.catalog import RULES
from flake8_dlworker.notebook import is_nbqa_script
from flake8_dlworker.rules import SHARED, Scan

START_METHODS = ("spawn", "forkserver", "fork")
#: rules that depend on the host running flake8: off unless selected by their own code
HOST_RULES = tuple(code for code, rule in RULES.items() if rule.default_off)
DEFAULT_MIN_RAM_GB = 16.0


class Host(NamedTuple):
    """What DLW105 and DLW110 compare a loader with; None turns the rule off."""
    ram_gb: Optional[float] = None
    min_ram_gb: float = DEFAULT_MIN_RAM_GB
    max_workers: Optional[int] = None
    cpus: Optional[int] = None


def findings(tree, filename, start_method="spawn", host=Host(), notebook=False):
    """Every finding for one parsed module, without the prefilter.

    ``notebook``: the module is a notebook's code cells end to end
    (:mod:`flake8_dlworker.notebook`): its definitions live in the kernel's
    ``__main__``, which no worker can import, and no worker re-runs its top-level
    code.

    The cyclic garbage collector is paused while the module is analysed: each of its
    passes would walk the whole syntax tree again, which on a large module costs more
    than the analysis itself.  It is restored (and catches up) when the analysis ends."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return _findings(tree, filename, start_method, host, notebook)
    finally:
        if paused:
            gc.enable()


def _findings(tree, filename, start_method, host, notebook):
    project = Project(filename)  # sibling modules, read lazily and at most once each
    facts = analyze_module(tree, filename, project, notebook)
    project.follow_sys_path(facts)
    loaders = [(call, scope) for call, scope, _owner in facts.calls
               if is_dataloader_call(call, scope, facts)]
    workers = [(call, scope) for call, scope in loaders if may_have_workers(call)]
    scan = Scan(facts, project, start_method, host, notebook, loaders, workers)
    found = []
    for rule in rule_modules():
        found.extend(rule.findings(scan))
    found.sort()
    return found


_RULE_MODULES = []


def rule_modules():
    """The rules of several causes (``flake8_dlworker.rules``), then each cause's own
    (its folder's ``rule.py``), imported once."""
    if not _RULE_MODULES:
        _RULE_MODULES.extend(importlib.import_module("flake8_dlworker.rules." + name)
                             for name in SHARED)
        _RULE_MODULES.extend(importlib.import_module(catalog.module(code, "rule"))
                             for code in catalog.having("rule"))
    return _RULE_MODULES


def _named(code, options):
    """True when the user selected ``code`` itself, not only a prefix such as ``DLW``."""
    chosen = list(getattr(options, "select", None) or ()) + list(
        getattr(options, "extend_select", None) or ())
    return any(code.startswith(entry) and len(entry) >= len(code) for entry in chosen)


class DataLoaderWorkerChecker:
    name = "flake8-dlworker"
    version = flake8_dlworker.__version__
    #: off unless selected (as flake8-bugbear does with its opinionated codes)
    extend_default_ignore = HOST_RULES
    start_method = "spawn"
    host = Host()

    __slots__ = ("_tree", "_filename", "_lines")

    def __init__(self, tree, filename, lines):
        self._tree = tree
        self._filename = filename
        self._lines = lines

    @classmethod
    def add_options(cls, parser):
        parser.add_option(
            "--dlw-start-method", default="spawn", choices=START_METHODS,
            parse_from_config=True,
            help="start method the DataLoader workers will use (default: spawn); "
                 "'fork' silences the rules that only break under spawn/forkserver")
        parser.add_option(
            "--dlw-min-ram-gb", type=float, default=DEFAULT_MIN_RAM_GB,
            parse_from_config=True,
            help="DLW105: report pin_memory on hosts with less RAM than this, in GiB "
                 "(default: %(default)s)")
        parser.add_option(
            "--dlw-max-workers", type=int, default=None, parse_from_config=True,
            help="DLW110: report a literal num_workers above this "
                 "(default: the CPUs this host can use)")
        parser.extend_default_ignore(cls.extend_default_ignore)

    @classmethod
    def parse_options(cls, options):
        """Once per flake8 run: the host is read here, never per file."""
        cls.start_method = options.dlw_start_method
        ram_gb = max_workers = cpus = None
        if _named("DLW105", options):
            from flake8_dlworker.host import ram_gb as read_ram

            ram_gb = read_ram()
        if _named("DLW110", options):
            from flake8_dlworker.host import usable_cpus

            cpus = usable_cpus()
            max_workers = options.dlw_max_workers
            if max_workers is None:
                max_workers = cpus
        cls.host = Host(ram_gb, options.dlw_min_ram_gb, max_workers, cpus)

    def run(self):
        """``nbqa flake8 notebook.ipynb`` hands flake8 a script of the notebook's cells,
        beside the notebook, and maps each line back to its cell: that script is checked
        as a notebook."""
        if not (might_start_workers("".join(self._lines))
                or reaches_sibling_workers(self._tree, self._filename)):
            return
        for finding in findings(self._tree, self._filename, self.start_method, self.host,
                                notebook=is_nbqa_script(self._lines)):
            yield (finding.line, finding.col, "%s %s" % (finding.code, finding.text),
                   type(self))
