"""The Python files and notebooks under ``doctor check``'s paths, and their findings,
on every core.

Directories are walked as flake8 walks them: ``*.py`` files (and ``*.ipynb``
notebooks), skipping the folders and files that match an exclude pattern (a glob on the
name or on the whole path).
"""
import fnmatch
import os

from doctor.static import file_findings

#: flake8's default excludes, plus virtual environments, build output and Jupyter's
#: saved copies of notebooks
DEFAULT_EXCLUDE = (".svn", "CVS", ".bzr", ".hg", ".git", "__pycache__", ".tox", ".nox",
                   ".eggs", "*.egg", ".venv", "venv", "build", "dist", ".ipynb_checkpoints")
#: what a directory is searched for
SUFFIXES = (".py", ".ipynb")
#: below this many files one process is quicker than starting a pool
PARALLEL_FROM = 32


def patterns(text):
    """``--exclude a,b/*`` as a tuple of globs."""
    return tuple(p.strip().rstrip("/") for p in text.split(",") if p.strip())


def excluded(path, exclude):
    name = os.path.basename(path)
    full = os.path.abspath(path)
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(full, os.path.abspath(p))
               for p in exclude)


def python_files(paths, exclude=DEFAULT_EXCLUDE):
    """[(file, named)]: ``named`` when the user gave the file itself, not its folder."""
    found = []
    for path in paths:
        if not os.path.isdir(path):
            found.append((path, True))
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not excluded(os.path.join(root, d), exclude))
            found += [(os.path.normpath(os.path.join(root, f)), False) for f in sorted(files)
                      if f.endswith(SUFFIXES) and not excluded(os.path.join(root, f), exclude)]
    return found


def _one(job):
    path, named, start_method = job
    return file_findings(path, start_method, prefilter=not named)


def collect(files, start_method, jobs=None):
    """[(findings, problems)] for ``python_files``'s list, in its order."""
    work = [(path, named, start_method) for path, named in files]
    jobs = jobs or os.cpu_count() or 1
    if jobs < 2 or len(work) < PARALLEL_FROM:
        return [_one(job) for job in work]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(_one, work, chunksize=max(1, len(work) // (jobs * 4))))
