"""DLW106: persistent_workers or a prefetch_factor while num_workers is 0, a plain
contradiction torch rejects at construction (and its Hugging Face TrainingArguments
form)."""
import ast

from flake8_dlworker.analysis import frameworks
from flake8_dlworker.analysis.flow import default_for_parameter, unpacked_keywords
from flake8_dlworker.analysis.loaders import (
    UNKNOWN, argument, has_unknown_arguments, is_known, literal, literal_int, value_of)
from flake8_dlworker.analysis.values import argument_for_parameter
from flake8_dlworker.catalog import RULES
from flake8_dlworker.rules import Finding


def findings(scan):
    found = []
    if frameworks.uses_frameworks(scan.facts):
        found.extend(check_framework_options(scan.facts))
    if scan.loaders:
        found.extend(check_worker_options(scan.loaders, scan.facts))
    return found


def check_worker_options(loaders, facts):
    """DLW106: persistent_workers=True or a prefetch_factor while num_workers is 0: as
    written, from a ``**config`` dict, or with the script's argparse defaults."""
    for call, scope in loaders:
        given = _given(call, scope, facts)
        workers, source = _workers(given, call, scope, facts)
        if workers != 0:
            continue
        for name in ("persistent_workers", "prefetch_factor"):
            if name not in given:
                continue
            node, value_scope = given[name]
            value = literal(value_of(node), value_scope, facts)
            if not is_known(value):  # persistent_workers=args.persistent: its default
                value = (facts.summaries.argparse_default(value_of(node), value_scope)
                         or (None, UNKNOWN))[1]
            if not is_known(value):
                continue  # persistent_workers=workers > 0, prefetch_factor=2 if nw else None
            if name == "persistent_workers" and value is not True:
                continue
            if name == "prefetch_factor" and value is None:
                continue
            option = "%s=%r" % (name, value)
            yield Finding(node.lineno, node.col_offset, "DLW106",
                          RULES["DLW106"].message.format(option=option, source=source))


def check_framework_options(facts):
    """DLW106 for Hugging Face TrainingArguments: its loaders get the same options."""
    for call, scope, _owner in facts.calls:
        if facts.qualname(call.func, scope) not in frameworks.HF_ARGUMENTS:
            continue
        if frameworks.hf_workers(call, scope, facts) != 0:
            continue
        for kw in call.keywords:
            if kw.arg not in frameworks.HF_WORKER_OPTIONS:
                continue
            value = literal(kw.value, scope, facts)
            if not is_known(value) or value is None or value is False:
                continue
            option = "%s=%r" % (kw.arg, value)
            yield Finding(kw.lineno, kw.col_offset, "DLW106", RULES["DLW106"].message.format(
                option=option, source=" (dataloader_num_workers)"))


def _given(call, scope, facts):
    """name -> (node to report at, scope) for the worker options of a loader call."""
    given = {}
    for name, value, value_scope in unpacked_keywords(call, scope, facts):
        given[name] = (value, value_scope)  # DataLoader(ds, **config)
    for name in ("num_workers", "persistent_workers", "prefetch_factor"):
        node = argument(call, name)
        if node is not None:
            given[name] = (node, scope)
    return given


def _workers(given, call, call_scope, facts):
    """(num_workers when known, words saying where 0 comes from)."""
    if "num_workers" not in given:
        unknown = has_unknown_arguments(call) and not _all_unpacked_known(
            call, call_scope, facts)
        return (None if unknown else 0), ""
    node, scope = given["num_workers"]
    expr = value_of(node)
    count = literal_int(expr, scope, facts)
    if count is not None:
        return count, ""
    default = facts.summaries.argparse_default(expr, scope)
    if default is not None:
        flag, value = default
        return value, " with the default arguments (%s defaults to %r)" % (flag, value)
    default = _attribute_default(expr, scope, facts)
    if default is not None:
        made, value = default
        return value, " with the class's default (%s)" % made
    return None, ""


def _attribute_default(expr, scope, facts):
    """``num_workers=self.num_workers`` in a method of a class (a Lightning DataModule)
    whose ``__init__`` keeps a parameter's int default, ``self.num_workers =
    num_workers`` (or the int itself): (``DM(num_workers=0)``, 0), when no call of the
    class in the module gives that parameter another value; else None."""
    if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)
            and expr.value.id == "self" and scope.cls is not None):
        return None
    cls = scope.cls
    class_scope = facts.scopes.get(cls)
    init = class_scope.methods.get("__init__") if class_scope is not None else None
    if init is None:
        return None
    kept = [value for attr, value in init.self_assigns if attr == expr.attr]
    if len(kept) != 1:
        return None
    value, param = kept[0], None
    if isinstance(value, ast.Name):
        param, value = value.id, default_for_parameter(init.node, value.id)
        if value is None or not any(a.arg == param for a in init.node.args.args
                                    + init.node.args.kwonlyargs):
            return None
    count = literal_int(value, init, facts)
    if count is None:
        return None
    for call, _call_scope, _owner in facts.calls if param is not None else ():
        if not (isinstance(call.func, ast.Name) and call.func.id == cls.name):
            continue
        if any(isinstance(a, ast.Starred) for a in call.args) or any(
                kw.arg is None for kw in call.keywords):
            return None  # DM(*args) / DM(**config): the count is not known
        given = argument_for_parameter(call, init.node, param, True)
        if given is not None and literal_int(given, _call_scope, facts) != count:
            return None
    shown = "%s(%s=%d)" % (cls.name, param, count) if param else "%s.%s = %d" % (
        cls.name, expr.attr, count)
    return shown, count


def _all_unpacked_known(call, scope, facts):
    """Every ``**d`` of the call is a dict whose every key the analysis can read."""
    return not any(isinstance(a, ast.Starred) for a in call.args) and all(
        kw.arg is not None or _closed_dict(kw.value, scope, facts, 0) for kw in call.keywords)


def _closed_dict(expr, scope, facts, depth):
    if isinstance(expr, ast.Dict):
        return all(isinstance(key, ast.Constant) for key in expr.keys)
    if isinstance(expr, ast.Call):
        return (isinstance(expr.func, ast.Name) and expr.func.id == "dict" and not expr.args
                and all(kw.arg is not None for kw in expr.keywords))
    if isinstance(expr, ast.Name) and depth < 3:
        bindings = facts.lookup(expr.id, scope)
        return bool(bindings) and all(
            isinstance(b.value, ast.expr) and _closed_dict(b.value, b.scope, facts, depth + 1)
            for b in bindings)
    return False
