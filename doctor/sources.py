"""The files under ``doctor check``'s paths, found as flake8 finds them.

A directory is walked as flake8 walks it (links to folders not followed): a file is
taken when its name matches flake8's ``filename`` patterns (``*.py``) or is a notebook
(``*.ipynb``), and a folder or file matching an exclude pattern (a glob on the name or on
the whole path, flake8's rule) is skipped. A file named on the command line is taken
whatever its name, unless excluded, as flake8 does. A folder that cannot be listed is a
problem, not a silent gap.
"""
import logging
import os

#: besides flake8's exclude setting: virtual environments, build output and Jupyter's
#: saved copies of notebooks (``--exclude`` replaces both)
EXTRA_EXCLUDE = (".venv", "venv", "build", "dist", ".ipynb_checkpoints")

_LOG = logging.getLogger(__name__)


def patterns(text):
    """``--exclude a,b/*`` as a tuple of globs."""
    return tuple(p.strip().rstrip("/") for p in text.split(",") if p.strip())


def files_under(paths, exclude, filename_patterns):
    """(files, problems): the files to check, in walk order, and a
    :class:`doctor.lint.Problem` for each folder that could not be listed."""
    from flake8 import utils

    from doctor.lint import Problem

    def excluded(path):
        return utils.matches_filename(path, exclude, "%(path)s excluded%(whether)s", _LOG)

    files, problems = [], []

    def unreadable(error):
        problems.append(Problem(error.filename, "cannot list the folder: %s"
                                % (error.strerror or error)))

    for path in paths:
        if excluded(path):
            continue
        if not os.path.isdir(path):
            files.append(path)
            continue
        for root, dirs, names in os.walk(path, onerror=unreadable):
            dirs[:] = sorted(d for d in dirs if not excluded(os.path.join(root, d)))
            files += [os.path.normpath(os.path.join(root, name)) for name in sorted(names)
                      if utils.fnmatch(os.path.join(root, name), filename_patterns)
                      and not excluded(os.path.join(root, name))]
    return files, problems
