"""Whether a module's text can start workers at all, from words alone: a module that
mentions none of them imports nothing that starts a worker, and the checker skips it."""
from flake8_dlworker.analysis import frameworks

WORDS = ("DataLoader", "multiprocessing", "ProcessPoolExecutor", "utils.data",
         "utils import data") + frameworks.PREFILTER


def might_start_workers(source):
    return any(word in source for word in WORDS)
