"""DLW106: ``persistent_workers=True`` or ``prefetch_factor`` while ``num_workers`` is 0.

When ``num_workers`` is absent or a literal 0 the argument is dropped (it has no
effect without workers); in a dict literal of loader arguments (``**LOADER``) the entry
is, reading the dict's own ``"num_workers"``. When it is a name that is 0 here but may change, the
argument is made conditional on it: ``persistent_workers=workers > 0``,
``prefetch_factor=4 if workers > 0 else None``. Hugging Face ``TrainingArguments``
options (``dataloader_persistent_workers``, ``dataloader_prefetch_factor`` against
``dataloader_num_workers``) are fixed the same way.
"""
import libcst as cst

from doctor.patches import _cst

CODE = "DLW106"
STATIC = True
#: DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers)
_NUM_WORKERS_POSITION = 5


def fix(source, finding, facts):
    tree = _cst.Tree(source)
    arg = tree.first_at(finding.line, finding.col, cst.Arg)
    if arg is None:
        return _fix_config(tree, finding)
    if arg.keyword is None:
        return None
    # TrainingArguments(dataloader_persistent_workers=True): the same options, prefixed
    prefix = "dataloader_" if arg.keyword.value.startswith("dataloader_") else ""
    option = arg.keyword.value[len(prefix):]
    if option not in ("persistent_workers", "prefetch_factor"):
        return None
    call = tree.parents.get(arg)
    if not isinstance(call, cst.Call):
        return None
    workers = _num_workers(call, prefix)
    if workers is None or isinstance(workers, cst.Integer):
        return tree.module.deep_replace(call, _without(call, arg)).code
    count = _cst.code(workers.with_changes(lpar=[], rpar=[])).strip()
    if option == "persistent_workers":
        value = "%s > 0" % count
    else:
        value = "%s if %s > 0 else None" % (_cst.code(arg.value).strip(), count)
    new = arg.with_changes(value=cst.parse_expression(value))
    return tree.module.deep_replace(arg, new).code


def _num_workers(call, prefix=""):
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == prefix + "num_workers":
            return arg.value
    if prefix:
        return None  # TrainingArguments: never given by position
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if len(positional) > _NUM_WORKERS_POSITION:
        return positional[_NUM_WORKERS_POSITION].value
    return None


def _without(call, arg):
    args = list(call.args)
    index = args.index(arg)
    del args[index]
    if index == len(args) and args:
        # it was the last: the one before loses its comma (and the line break after it)
        args[-1] = args[-1].with_changes(comma=arg.comma)
    return call.with_changes(args=args)


def _fix_config(tree, finding):
    """The option is an entry of a dict literal of loader arguments (a config given as
    ``DataLoader(..., **LOADER)``): the same change, made to the entry, reading the
    dict's own ``"num_workers"`` entry."""
    value = tree.first_at(finding.line, finding.col)
    element = tree.parents.get(value)
    config = tree.parents.get(element)
    if not isinstance(element, cst.DictElement) or not isinstance(config, cst.Dict):
        return None
    option = _key(element)
    if option not in ("persistent_workers", "prefetch_factor"):
        return None
    workers = next((e.value for e in config.elements
                    if isinstance(e, cst.DictElement) and _key(e) == "num_workers"), None)
    if workers is None or isinstance(workers, cst.Integer):
        elements = list(config.elements)
        index = elements.index(element)
        del elements[index]
        if index == len(elements) and elements:
            elements[-1] = elements[-1].with_changes(comma=element.comma)
        return tree.module.deep_replace(config, config.with_changes(elements=elements)).code
    if not isinstance(workers, (cst.Name, cst.Attribute)):
        return None  # an expression there would be evaluated twice
    count = _cst.code(workers).strip()
    if option == "persistent_workers":
        new = "%s > 0" % count
    else:
        new = "%s if %s > 0 else None" % (_cst.code(element.value).strip(), count)
    return tree.module.deep_replace(
        element, element.with_changes(value=cst.parse_expression(new))).code


def _key(element):
    key = element.key
    if isinstance(key, cst.SimpleString):
        return key.evaluated_value
    return None
