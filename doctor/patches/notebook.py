"""The fix for a notebook: what its workers need moves into a module beside it.

In a notebook every definition lives in the interactive ``__main__``, which a spawned
worker never imports, so a class or function that reaches a worker must come from a
module. The fix:

1. the script fixes of the notebook's code read as one script (a lambda becomes a
   named function, a nested function moves to the top level, a handle is opened
   lazily: :func:`doctor.patches.fixed_source` for the causes whose record has a
   ``notebook_script_order``, in that order);
2. every definition the checker then finds reaching a worker from a cell (the cause
   whose ``pickle_kind`` is main), with
   the definitions of the notebook it uses, moves into ``<notebook>_defs.py`` beside
   the notebook, after the imports it needs; the cell imports it from there instead.

Only the ``source`` of the changed cells changes: outputs, metadata and the other cells
stay as they were, and the result is checked to be a valid notebook. A definition that
uses a variable the notebook computes cannot move, and then there is no patch.
"""
import ast
import json
import os
import re
from typing import NamedTuple, Optional

from doctor.patches import fixed_source, unified_diff
from flake8_dlworker import catalog

_CELL = "# <dlw-cell %d>"
_CELL_LINE = re.compile(r"^# <dlw-cell (\d+)>$")
_MAGIC = "# <dlw-magic>"
_NAMED = re.compile(r"^(?:class|function) '([A-Za-z_][A-Za-z0-9_]*)'")


class NotebookFix(NamedTuple):
    """The notebook's text before and after, and the module it now imports from."""
    path: str
    before: str
    after: str
    module_path: str
    module_text: str
    moved: tuple

    def diff(self, rel_notebook, rel_module):
        """One unified diff: the notebook's change and the new module (``git apply``)."""
        lines = ["--- /dev/null\n", "+++ b/%s\n" % rel_module,
                 "@@ -0,0 +1,%d @@\n" % len(self.module_text.splitlines())]
        lines.extend("+" + line for line in self.module_text.splitlines(True))
        return unified_diff(rel_notebook, self.before, self.after) + "".join(lines)


def module_name(path):
    """``my-notebook.ipynb`` -> ``my_notebook_defs``."""
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    if not stem or stem[0].isdigit():
        stem = "nb_" + stem
    return stem + "_defs"


def fix(path, start_method="spawn") -> Optional[NotebookFix]:
    """The fixed notebook and its new module, or None where no safe fix exists."""
    with open(path, "r", encoding="utf-8", newline="") as handle:
        before = handle.read()
    book = json.loads(before)
    cells = [(i, _text(c.get("source", ""))) for i, c in enumerate(book.get("cells", []))
             if c.get("cell_type") == "code"]
    script = _as_script(cells)
    rel = os.path.basename(path)
    for code in catalog.ordered("notebook_script_order"):  # before definitions move
        fixed = fixed_source(code, rel, script, start_method=start_method)
        if fixed is not None:
            script = fixed
    new_cells = _cells_of(script)
    if new_cells is None or set(new_cells) != {i for i, _ in cells}:
        return None
    name = module_name(path)
    moved = _move(new_cells, path, name, start_method)
    if moved is None:
        return None
    new_cells, module_text, names = moved
    if not names:
        return None
    for index, source in new_cells.items():
        if source != dict(cells)[index]:
            book["cells"][index]["source"] = _like(book["cells"][index].get("source"), source)
    after = json.dumps(book, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    _check_notebook(after)
    module_path = os.path.join(os.path.dirname(path), name + ".py")
    if os.path.lexists(module_path):
        return None  # never overwrite a module of the user's
    return NotebookFix(path, before, after, module_path, module_text, tuple(names))


# -- the notebook as one script, and back ---------------------------------------------

def _text(source):
    return "".join(source) if isinstance(source, list) else source


def _like(old, text):
    """``text`` in the form the notebook kept the cell's source in (lines or one string)."""
    if isinstance(old, list):
        return text.splitlines(True)
    return text


def _is_magic(line):
    stripped = line.lstrip()
    return stripped.startswith(("%", "!")) or stripped.rstrip().endswith("?")


def _as_script(cells):
    """The code cells as one script: a marker line before each cell, magics and shell
    escapes kept as marked comments, so that the script splits back into cells."""
    lines = []
    for index, source in cells:
        lines.append(_CELL % index)
        for line in source.splitlines():
            lines.append(_MAGIC + line if _is_magic(line) else line)
    return "\n".join(lines) + "\n"


def _cells_of(script):
    """{cell index: source} from a script made by :func:`_as_script`, or None."""
    cells, current, lines = {}, None, []
    for line in script.splitlines():
        found = _CELL_LINE.match(line)
        if found:
            if current is not None:
                cells[current] = "\n".join(lines)
            current, lines = int(found.group(1)), []
            continue
        if current is None:
            if line.strip():
                return None  # a fix wrote above the first cell
            continue
        lines.append(line[len(_MAGIC):] if line.startswith(_MAGIC) else line)
    if current is not None:
        cells[current] = "\n".join(lines)
    return {index: source.rstrip("\n") for index, source in cells.items()}


# -- moving definitions ---------------------------------------------------------------

def _move(cells, path, name, start_method):
    """(new cells, module text, moved names), or None when a needed definition cannot
    move (it uses a value the notebook computes)."""
    from flake8_dlworker.plugin import findings

    script = _as_script(sorted(cells.items()))
    tree = ast.parse(script, path)
    defined = _top_definitions(tree)
    wanted = []
    for finding in findings(tree, path, start_method, notebook=True):
        if catalog.RULES[finding.code].field("pickle_kind") == "main":
            named = _NAMED.match(finding.text)
            if named and named.group(1) in defined and named.group(1) not in wanted:
                wanted.append(named.group(1))
    if not wanted:
        return cells, "", []
    imports = _imports(tree)
    assigned = _assigned(tree)
    names = _closure(wanted, defined, assigned)
    if names is None:
        return None
    needed = set()
    for each in names:
        needed |= _used(defined[each])
    module_lines = ['"""Definitions that the DataLoader workers of %s import (spawned workers '
                    'cannot see a notebook\'s own)."""' % os.path.basename(path)]
    for node in imports:
        kept = [a for a in node.names if (a.asname or a.name).split(".")[0] in needed]
        if kept:
            module_lines.append(_import_text(node, kept))
    lines = script.splitlines()
    for each in sorted(names, key=lambda n: _first_line(defined[n])):
        node = defined[each]
        module_lines.extend(["", ""] + lines[_first_line(node) - 1:node.end_lineno])
    module_text = "\n".join(module_lines) + "\n"
    # the cells: each moved definition leaves, and the first one's place imports them all
    drop = set()
    for each in names:
        drop.update(range(_first_line(defined[each]), defined[each].end_lineno + 1))
    first = min(_first_line(defined[n]) for n in names)
    statement = "from %s import %s" % (name, ", ".join(sorted(names)))
    out = []
    for number, line in enumerate(lines, 1):
        if number == first:
            out.append(statement)
        if number not in drop:
            out.append(line)
    new_cells = _cells_of("\n".join(out) + "\n")
    return {i: _tidy(s, statement) for i, s in new_cells.items()}, module_text, sorted(names)


def _first_line(node):
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


def _top_definitions(tree):
    return {node.name: node for node in tree.body
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))}


def _imports(tree):
    return [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
            and not (isinstance(node, ast.ImportFrom) and node.level)]


def _assigned(tree):
    """Names the notebook binds at the top level other than by def, class or import."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef,
                             ast.Import, ast.ImportFrom)):
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.add(sub.id)
    return names


def _used(node):
    """Names a definition reads that it does not bind itself (a fair over-estimate)."""
    bound, read = set(), set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (read if isinstance(sub.ctx, ast.Load) else bound).add(sub.id)
        elif isinstance(sub, ast.arg):
            bound.add(sub.arg)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and sub is not node:
            bound.add(sub.name)
    return read - bound


def _closure(wanted, defined, assigned):
    """The wanted definitions and the notebook's definitions they use; None when one of
    them reads a value the notebook computes."""
    names, todo = set(), list(wanted)
    while todo:
        each = todo.pop()
        if each in names:
            continue
        names.add(each)
        used = _used(defined[each])
        if used & (assigned - set(defined)):
            return None
        todo.extend(u for u in used if u in defined)
    return names


def _import_text(node, aliases):
    parts = ", ".join(a.name + (" as " + a.asname if a.asname else "") for a in aliases)
    if isinstance(node, ast.Import):
        return "import " + parts
    return "from %s import %s" % (node.module, parts)


def _tidy(source, statement):
    """No run of more than two blank lines, none at the ends, and the new import right
    under the cell's imports when it follows them."""
    source = re.sub(r"(^|\n)((?:import|from) [^\n]*)\n\n+(%s)(\n|$)" % re.escape(statement),
                    r"\1\2\n\3\4", source)
    return re.sub(r"\n{4,}", "\n\n\n", source).strip("\n")


def _check_notebook(text):
    import nbformat

    nbformat.validate(nbformat.reads(text, as_version=4))
