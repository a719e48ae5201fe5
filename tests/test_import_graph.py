"""The project's modules import each other without a cycle, counting the imports made
inside functions too (a cycle through a function-level import is still one). Read from
the source with ``ast``: nothing is imported to check it."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("flake8_dlworker", "doctor")
#: the causes' example programs are no part of the tool
EXAMPLES = ("invalid", "valid", "patches")


def _modules():
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "causes" in parts and any(p in EXAMPLES for p in parts):
                continue
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imports(name, path, known):
    """The project modules ``name`` imports, anywhere in its text."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    wanted = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [base] + ["%s.%s" % (base, alias.name) for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                wanted.add(target)
    return wanted


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _graph():
    modules = _modules()
    # a package's __init__ is imported with any module below it: not an arrow of its own
    return {name: {t for t in _imports(name, path, modules) if not name.startswith(t + ".")}
            for name, path in modules.items()}


def test_no_import_cycle_among_the_projects_modules():
    assert _cycles(_graph()) == []


def test_the_check_finds_a_cycle_through_a_function_level_import(tmp_path):
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    module = tmp_path / "x.py"
    module.write_text("def f():\n    from doctor import pipeline\n")
    assert _imports("doctor.x", module, {"doctor", "doctor.pipeline"}) == {
        "doctor", "doctor.pipeline"}


def test_the_lint_side_imports_nothing_of_the_doctor():
    """The flake8 plugin's modules (everything of flake8_dlworker but the causes' runtime
    parts, the pytest plugin and the pickling probe) reach no doctor module."""
    graph = _graph()
    lint_side = {"flake8_dlworker.plugin"}
    todo = list(lint_side)
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in lint_side:
                lint_side.add(nxt)
                todo.append(nxt)
    assert not [m for m in lint_side if m.split(".")[0] == "doctor"], sorted(lint_side)
