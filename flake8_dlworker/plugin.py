"""The flake8 entry point: options, the prefilter, and the findings of every rule."""
import flake8_dlworker
from flake8_dlworker.analysis import analyze_module
from flake8_dlworker.analysis.project import Project, calls_sibling_at_top
from flake8_dlworker.rules import pickling, unguarded

START_METHODS = ("spawn", "forkserver", "fork")
#: the catalog codes this checker reports; the others are detected elsewhere or later
IMPLEMENTED = frozenset(("DLW101", "DLW102", "DLW103", "DLW104"))
#: a module that mentions none of these imports nothing that starts a worker
_PREFILTER = ("DataLoader", "multiprocessing", "ProcessPoolExecutor", "utils.data",
              "utils import data")


def findings(tree, filename, start_method="spawn"):
    """Every finding for one parsed module, without the prefilter."""
    if start_method == "fork":
        return []  # DLW101-DLW104 only break when workers are spawned
    facts = analyze_module(tree, filename)
    project = Project(filename)  # sibling modules, read lazily and at most once each
    found = list(unguarded.check(facts, project))
    found.extend(pickling.check(facts, start_method, project))
    found.sort()
    return found


def might_start_workers(source):
    return any(word in source for word in _PREFILTER)


class DataLoaderWorkerChecker:
    name = "flake8-dlworker"
    version = flake8_dlworker.__version__
    start_method = "spawn"

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

    @classmethod
    def parse_options(cls, options):
        cls.start_method = options.dlw_start_method

    def run(self):
        if not (might_start_workers("".join(self._lines))
                or calls_sibling_at_top(self._tree, self._filename)):
            return
        for finding in findings(self._tree, self._filename, self.start_method):
            yield (finding.line, finding.col, "%s %s" % (finding.code, finding.text),
                   type(self))
