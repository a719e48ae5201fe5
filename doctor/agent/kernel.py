"""Inside the Jupyter kernel that runs a notebook for the doctor (see
:mod:`doctor.agent.notebook`): the same start method, hooks and stack answers as
:mod:`doctor.agent.startup` gives a script, and cell code that names the notebook.

Every cell is compiled under the notebook's own path, its lines shifted to where the
cell lies in the notebook's code read as one script
(:func:`flake8_dlworker.notebook.read`). A frame of cell 4 then reads
``File "/work/train.ipynb", line 23`` in a traceback, a loader records the same place,
and the doctor reads the notebook as the script it diagnoses. An error in a cell is
also printed, as Python prints it, to the kernel's real standard error, where the
doctor reads the script's output.
"""
import ast
import linecache
import sys
import traceback

from doctor.agent import line_buffered, startup


def prepare(path, cells, source):
    """``cells``: [(cell source, the line of the script where the cell starts)];
    ``source``: the notebook's code read as one script."""
    shell = get_ipython()  # noqa: F821 - the kernel's global
    line_buffered(sys.__stdout__)
    startup.become_main()
    _CellPlaces(shell, path, cells, source).install()
    shell.set_custom_exc((Exception,), _print_and_show)


class _CellPlaces:
    """Compiles each notebook cell under the notebook's path, at its lines there."""

    def __init__(self, shell, path, cells, source):
        self.shell, self.path, self.cells = shell, path, cells
        self.lines = [line + "\n" for line in source.splitlines()]
        self.next = 0         # cells run in order: the next one to look for
        self.offset = None    # lines before the running cell; None: not a notebook cell

    def install(self):
        self.shell.events.register("pre_run_cell", self._pre_run_cell)
        self.shell.ast_transformers.append(_Shift(self))
        compiler = self.shell.compile
        real_name, real_cache = compiler.get_code_name, compiler.cache

        def get_code_name(raw_code, transformed_code, number):
            if self.offset is None:
                return real_name(raw_code, transformed_code, number)
            return self.path

        def cache(*args, **kwargs):
            name = real_cache(*args, **kwargs)
            if name == self.path:  # the whole notebook, so each line is where it is
                linecache.cache[name] = (sum(map(len, self.lines)), None, self.lines, name)
            return name

        compiler.get_code_name, compiler.cache = get_code_name, cache

    def _pre_run_cell(self, info):
        raw = getattr(info, "raw_cell", None)
        for index in range(self.next, len(self.cells)):
            if self.cells[index][0] == raw:
                self.next = index + 1
                self.offset = self.cells[index][1] - 1
                return
        self.offset = None  # the doctor's own code, or a cell it does not know


class _Shift(ast.NodeTransformer):
    """Moves a cell's line numbers to where the cell lies in the notebook."""

    def __init__(self, places):
        self.places = places

    def visit(self, node):
        if self.places.offset:
            ast.increment_lineno(node, self.places.offset)
        return node


def _print_and_show(shell, etype, value, tb, tb_offset=None):
    """Print the error as Python would (the doctor reads it), then as IPython does."""
    text = "".join(traceback.format_exception(etype, value, tb))
    try:
        sys.__stderr__.write(text)
        sys.__stderr__.flush()
    except (AttributeError, OSError, ValueError):
        pass
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
