"""What a setting read from the command line or a config object is when nobody changes it.

Training scripts seldom write ``num_workers=0``; they write ``num_workers=args.workers``
and leave the number to an ``add_argument(..., default=0)``, a ``set_defaults``, a
config dataclass or a class used as a namespace.  This module follows such a read to
that default:

- ``args.X`` where ``args`` comes from ``parser.parse_args()``, from a function of this
  module or of a module beside it that returns one (``from config import get_args``), or
  from a module beside it that parses at import (``from config import args``); the
  option's ``dest`` as argparse derives it (``dest=``, ``--x-y`` to ``x_y``) and the
  parser's ``set_defaults``;
- ``cfg.X`` where ``cfg`` is an instance of a dataclass whose field ``X`` the call
  leaves at its default, or is a class with a class attribute ``X``;
- ``min(a, b, ...)``: 0 when one of its arguments defaults to 0 (worker counts are
  never negative).

Every answer is a ``(words, value)`` pair: ``words`` say where the value comes from
(``--workers``), for the message.  A read that cannot be followed answers None.
"""
import ast

from flake8_dlworker.analysis.loaders import UNKNOWN, is_known, literal, positional

_MAX_DEPTH = 4
_PARSE = frozenset(("parse_args",))
_DATACLASS = frozenset(("dataclasses.dataclass", "pydantic.dataclasses.dataclass"))


def setting_default(expr, scope, facts, depth=0):
    """(words, value) for a read whose default a script states, else None."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, ast.Call):
        return _smallest(expr, scope, facts, depth)
    if not isinstance(expr, ast.Attribute):
        return None
    owner = expr.value
    if isinstance(owner, ast.Name):
        parsers = parser_modules(owner, scope, facts)
        if parsers:
            return _option_default(parsers, expr.attr)
    return _config_default(owner, expr.attr, scope, facts)


def _smallest(call, scope, facts, depth):
    """``min(args.workers, os.cpu_count())``: 0 when an argument defaults to 0."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "min"
            and not facts.lookup("min", scope)) or call.keywords or len(call.args) < 2:
        return None
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            return None
        if is_known(literal(arg, scope, facts)):
            continue
        found = setting_default(arg, scope, facts, depth + 1)
        if found is not None and found[1] == 0 and type(found[1]) is int:
            return found
    return None


# --- argparse ----------------------------------------------------------------------

def parser_modules(name, scope, facts, depth=0):
    """The facts of the modules whose argparse options ``name`` holds: ``name`` is bound
    to ``parse_args()``, to a call of a function that returns it, or is a parameter
    (``def main(args)``: this module's own options), or is imported from a module beside
    this one that binds it so."""
    found = []
    if depth > _MAX_DEPTH:
        return found
    bindings = facts.lookup(name.id, scope)
    for binding in bindings:
        value = binding.value
        if isinstance(value, ast.arg):
            found.extend(_given_by_callers(binding, facts, depth + 1) or [facts])
        elif isinstance(value, ast.expr):
            found.extend(_parsed_by(value, binding.scope, facts, depth + 1))
    if not bindings:
        qualname = facts.qualname(name, scope)
        other, top = _beside(qualname, facts)
        if other is not None:
            for binding in other.module.bindings.get(top, ()):
                if isinstance(binding.value, ast.expr):
                    found.extend(_parsed_by(binding.value, binding.scope, other, depth + 1))
    return _unique(found)


def _given_by_callers(binding, facts, depth):
    """``def main(args)`` called as ``main(get_args())``: the parsers its callers here
    hand it."""
    function = binding.scope.node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    found = []
    for call, scope, bound in facts.summaries.callers(function):
        given = argument_for_parameter(call, function, binding.name, bound)
        if given is not None:
            found.extend(_parsed_by(given, scope, facts, depth))
    return found


def _parsed_by(value, scope, facts, depth):
    if depth > _MAX_DEPTH:
        return []
    if isinstance(value, ast.Name):
        return parser_modules(value, scope, facts, depth)
    if not isinstance(value, ast.Call):
        return []
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in _PARSE:
        return [facts]
    found = []
    for function, home in functions_called(func, scope, facts):
        function_scope = home.scopes.get(function)
        if function_scope is not None:
            for returned in function_scope.returns:
                found.extend(_parsed_by(returned, function_scope, home, depth + 1))
    return found


def functions_called(func, scope, facts):
    """(FunctionDef, facts of its module) a call's function names: defined in this module
    or in a module beside it."""
    found = []
    if isinstance(func, ast.Name):
        for binding in facts.lookup(func.id, scope):
            if isinstance(binding.value, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((binding.value, facts))
        if found or facts.lookup(func.id, scope):
            return found
    other, top = _beside(facts.qualname(func, scope), facts)
    if other is not None:
        for binding in other.module.bindings.get(top, ()):
            if isinstance(binding.value, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((binding.value, other))
    return found


def _beside(qualname, facts):
    """(facts, name) for ``module.name`` when the module lies beside the linted file."""
    project = facts.project
    if not qualname or "." not in qualname or project is None:
        return None, None
    modname, top = qualname.rsplit(".", 1)
    return project.module(modname), top


def _unique(found):
    seen, unique = set(), []
    for facts in found:
        if id(facts) not in seen:
            seen.add(id(facts))
            unique.append(facts)
    return unique


def _option_default(parsers, dest):
    """(flag, default) when every module that may have parsed the arguments gives the
    option the same known default."""
    answers = set()
    for facts in parsers:
        defaults = facts.summaries.argparse_options()
        if dest not in defaults:
            return None
        answers.add(defaults[dest])
    if len(answers) != 1:
        return None
    return answers.pop()


def argparse_defaults(facts):
    """dest -> (flag, default) for the options of the module's ``add_argument`` calls
    whose default is known, ``set_defaults`` applied."""
    found, unknown = {}, set()
    overrides = []
    for call, scope, _owner in facts.calls:
        func = call.func
        if not isinstance(func, ast.Attribute):
            continue
        if func.attr == "set_defaults":
            overrides.append((call, scope))
        elif func.attr == "add_argument":
            option = _option(call, scope, facts)
            if option is None:
                continue
            dest, flag, value = option
            if dest in found or dest in unknown or not is_known(value):
                found.pop(dest, None)  # two options with one dest: which one wins varies
                unknown.add(dest)
            else:
                found[dest] = (flag, value)
    for call, scope in overrides:
        for kw in call.keywords:
            if kw.arg is None:
                return {}  # set_defaults(**d): any default may change
            value = literal(kw.value, scope, facts)
            flag = found.get(kw.arg, ("--" + kw.arg.replace("_", "-"),))[0]
            if is_known(value):
                found[kw.arg] = (flag, value)
            else:
                found.pop(kw.arg, None)
    return found


def _option(call, scope, facts):
    """(dest, flag, default) of one ``add_argument`` call, default unknown when the
    call does not say it plainly."""
    flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if len(flags) != len(call.args) or not flags:
        return None
    longs = [f for f in flags if f.startswith("--")]
    options = {kw.arg: kw.value for kw in call.keywords if kw.arg}
    dest = options.get("dest")
    if isinstance(dest, ast.Constant) and isinstance(dest.value, str):
        name = dest.value
    elif dest is not None:
        return None
    elif longs:
        name = longs[0][2:].replace("-", "_")
    else:
        name = flags[0].lstrip("-").replace("-", "_")
    flag = (longs or flags)[0]
    action = options.get("action")
    action = action.value if isinstance(action, ast.Constant) else action
    if "default" in options:
        value = literal(options["default"], scope, facts)
        if is_known(value) and action is None and isinstance(value, str):
            value = _converted(value, options.get("type"))
    elif action == "store_true":
        value = False
    elif action == "store_false":
        value = True
    elif action is None:
        value = None
    else:
        return name, flag, UNKNOWN
    return name, flag, value


def _converted(text, kind):
    """argparse applies ``type`` to a string default: ``default="0", type=int``."""
    if isinstance(kind, ast.Name) and kind.id == "int":
        try:
            return int(text)
        except ValueError:
            pass
    return UNKNOWN


# --- config objects ----------------------------------------------------------------

def _config_default(owner, attr, scope, facts):
    """``cfg.num_workers``: a dataclass instance's field left at its default, or a class
    attribute read from the class itself."""
    if not isinstance(owner, ast.Name):
        return None
    bindings = facts.lookup(owner.id, scope)
    if len(bindings) != 1:
        return None
    value, value_scope = bindings[0].value, bindings[0].scope
    if isinstance(value, ast.ClassDef):
        found = _class_attribute(value, attr, facts)
        return None if found is None else ("%s.%s" % (value.name, attr), found)
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
        return None
    for binding in facts.lookup(value.func.id, value_scope):
        if isinstance(binding.value, ast.ClassDef) and _is_dataclass(binding.value, facts):
            found = _field_left(binding.value, value, attr, facts)
            if found is not None:
                return "%s.%s" % (binding.value.name, attr), found
    return None


def _is_dataclass(classdef, facts):
    class_scope = facts.scopes.get(classdef)
    parent = class_scope.parent if class_scope is not None else facts.module
    for decorator in classdef.decorator_list:
        if isinstance(decorator, ast.Call):
            decorator = decorator.func
        if facts.qualname(decorator, parent) in _DATACLASS:
            return True
    return False


def _fields(classdef):
    return [stmt for stmt in classdef.body
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)]


def _field_left(classdef, call, attr, facts):
    """The field's literal default when the constructor call does not set it."""
    if classdef.bases or any(isinstance(a, ast.Starred) for a in call.args):
        return None  # a base's fields come first; *args may set any
    if any(kw.arg is None or kw.arg == attr for kw in call.keywords):
        return None
    fields = _fields(classdef)
    names = [f.target.id for f in fields]
    if attr not in names or names.index(attr) < len(call.args):
        return None
    if any(stmt.name == "__post_init__" for stmt in classdef.body
           if isinstance(stmt, ast.FunctionDef)):
        return None  # __post_init__ may change it
    field = fields[names.index(attr)]
    if field.value is None:
        return None
    value = literal(field.value, facts.scopes.get(classdef) or facts.module, facts)
    return value if is_known(value) else None


def _class_attribute(classdef, attr, facts):
    """``class cfg: num_workers = 0`` read as ``cfg.num_workers``."""
    found = None
    for stmt in classdef.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else (
            [stmt.target] if isinstance(stmt, ast.AnnAssign) and stmt.value is not None else [])
        for target in targets:
            if isinstance(target, ast.Name) and target.id == attr:
                if found is not None:
                    return None
                found = literal(stmt.value, facts.module, facts)
    return found if found is not None and is_known(found) else None


def argument_for_parameter(call, function, name, bound):
    """The expression a call gives for ``function``'s parameter ``name`` (or None)."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    params = [a.arg for a in function.args.posonlyargs + function.args.args]
    if bound:
        params = params[1:]
    if name not in params:
        return None
    return positional(call, params.index(name))
