"""Whether the checker can report anything for a module, from its text alone.

:meth:`flake8_dlworker.plugin.DataLoaderWorkerChecker.run` reports nothing for a module
unless its text mentions something that starts workers (``might_start_workers``) or
one of its unguarded top-level imports names a module that lies beside it
(:func:`flake8_dlworker.analysis.project.reaches_sibling_workers`, which needs the
syntax tree). :func:`may_report` answers from the text: False only when both are
certainly False, so that a caller that has no tree yet (``doctor check``) need not
build one for the checker's sake.

``reaches_sibling_workers`` needs the first name of an absolute import's module to be a
``NAME.py`` file or a ``NAME`` folder beside the module. That name is the first word
after ``from`` (with only spaces and line continuations between: a comment cannot come
there), or one of the words of the rest of the logical line after ``import``. So when
no such word is the name of an entry of the folder, it is False. Words are taken from
anywhere in the text (strings and comments too, which only adds words), and compared
without regard to case (a file system may ignore it) after NFKC normalisation (how
Python reads identifiers).
"""
import os
import re
import unicodedata

from flake8_dlworker.analysis.triggers import might_start_workers

#: ``import a.b as c, d``: the rest of the logical line after the keyword
_IMPORT = re.compile(r"import((?:[ \t\f]|\\[\s\S])(?:[^\n;#\\]|\\[\s\S])*)")
#: ``from a.b import c``: the first name after the keyword (a relative import has none)
_FROM = re.compile(r"from[ \t\f\\\r\n]+([^\s\\.,;#()]+)")
#: what separates the names of an import
_SEPARATORS = re.compile(r"[\s\\.,()]+")
#: folder -> the names (casefolded) a module there can be imported by (None: the folder
#: cannot be listed); kept until :func:`forget`
_FOLDERS = {}


def forget():
    """Read the folders, and the project's modules that hand classes to loaders
    (analysis/project.py), again from now on (files may have been added or changed
    since)."""
    from flake8_dlworker.analysis import project

    _FOLDERS.clear()
    project.forget()


def may_report(source, filename):
    """False when the checker certainly reports nothing for ``source`` (the module's
    text, as flake8 read it) in the file ``filename``."""
    return might_start_workers(source) or may_import_beside(source, filename)


def may_import_beside(source, filename):
    """False when no absolute import in ``source`` can name a module beside
    ``filename``."""
    names = _importable(os.path.dirname(os.path.abspath(filename or ".")))
    if names is None:
        return True
    if not names:
        return False
    words = set(_FROM.findall(source))
    for rest in _IMPORT.findall(source):
        words.update(_SEPARATORS.split(rest))
    return any(_folded(word) in names for word in words)


def _folded(name):
    return (name if name.isascii() else unicodedata.normalize("NFKC", name)).casefold()


def _importable(folder):
    if folder not in _FOLDERS:
        try:
            entries = os.listdir(folder)
        except OSError:
            _FOLDERS[folder] = None
            return None
        _FOLDERS[folder] = {_folded(name) for entry in entries
                            for name in (entry, entry[:-3] if entry.endswith(".py") else entry)}
    return _FOLDERS[folder]
