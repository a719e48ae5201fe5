"""The files under ``doctor check``'s paths, found as flake8 finds them.

A directory is walked as flake8 walks it (links to folders not followed): a file is
taken when its name matches flake8's ``filename`` patterns (``*.py``) or is a notebook
(``*.ipynb``), and a folder or file matching an exclude pattern (a glob on the name or on
the whole path, flake8's rule; by default flake8's own list: ``.svn``, ``CVS``,
``.bzr``, ``.hg``, ``.git``, ``__pycache__``, ``.tox``, ``.nox``, ``.eggs``, ``*.egg``)
is skipped. Nothing else is: a ``.venv``, ``build`` or ``node_modules`` folder is
checked, as flake8 checks it. Notebooks, which flake8 does not read, are not taken from
``.ipynb_checkpoints`` folders. A file named on the command line is taken
whatever its name, unless excluded, as flake8 does. A folder that cannot be listed is a
problem, not a silent gap.
"""
import logging
import os
from typing import NamedTuple, Optional


class Problem(NamedTuple):
    """Why a file, or a notebook's cell, was not checked. ``syntax``: it is not valid
    Python (flake8's E999); else it could not be read or analysed. ``line``: where, when
    known (in a notebook: in ``cell``)."""
    path: str
    reason: str
    line: Optional[int] = None
    cell: Optional[int] = None
    syntax: bool = False

    def place(self):
        from flake8_dlworker.notebook import cell_place

        if self.cell is not None:
            return "%s:%s" % (self.path, cell_place(self.cell, self.line or 1))
        return self.path if self.line is None else "%s:%d" % (self.path, self.line)

    def warning(self):
        return "doctor: warning: %s: %s (skipped)" % (self.place(), self.reason)


#: the folders whose notebooks are never searched: Jupyter's saved copies. Only the
#: notebooks: flake8 reads the Python files there, so ``check`` does too
NOTEBOOK_EXCLUDE = (".ipynb_checkpoints",)
#: a notebook's name
NOTEBOOK = "*.ipynb"

_LOG = logging.getLogger(__name__)


def patterns(text):
    """``--exclude a,b/*`` as a tuple of globs."""
    return tuple(p.strip().rstrip("/") for p in text.split(",") if p.strip())


def files_under(paths, exclude, filename_patterns, notebook_exclude=NOTEBOOK_EXCLUDE):
    """(files, problems): the files to check, in walk order, and a
    :class:`Problem` for each folder that could not be listed. A notebook
    found in a folder below one named in ``notebook_exclude`` is not taken."""
    from flake8 import utils

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
            patterns = filename_patterns
            if any(utils.fnmatch(part, notebook_exclude)
                   for part in os.path.relpath(root, path).split(os.sep)):
                patterns = [p for p in filename_patterns if p != NOTEBOOK]
            files += [os.path.normpath(os.path.join(root, name)) for name in sorted(names)
                      if utils.fnmatch(os.path.join(root, name), patterns)
                      and not excluded(os.path.join(root, name))]
    return files, problems
