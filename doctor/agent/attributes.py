"""A dataset's own attributes, each by a fingerprint: what the main process's hooks
compare across epochs (a persistent loader's dataset changed after its workers took their
copy) and what a worker compares around the loader's ``worker_init_fn``."""

#: a value whose repr is this short is compared, and shown, by its repr
_SMALL_REPR = 80
_SCALARS = (bool, int, float, complex, str, bytes, type(None))
#: at most this many of the dataset's attributes are compared
_MAX_ATTRIBUTES = 64


def attributes(dataset):
    """{name: (position, fingerprint, shown)} of the dataset's own attributes: a small
    number or string by its repr, anything else by its identity (a list changed in
    place is not seen); ``shown`` is the repr a report may print, else None."""
    from flake8_dlworker.untrusted import is_secret

    try:
        attrs = list(vars(dataset).items())[:_MAX_ATTRIBUTES]
    except TypeError:
        return {}
    found = {}
    for position, (name, value) in enumerate(attrs):
        fingerprint, shown = ("id", id(value)), None
        if isinstance(value, _SCALARS) and not (
                isinstance(value, (str, bytes)) and len(value) > _SMALL_REPR):
            try:
                text = repr(value)
            except ValueError:  # an int too long to print
                text = None
            if text is not None and len(text) <= _SMALL_REPR:
                fingerprint = ("value", text)
                shown = None if is_secret(text) else text
        found[name] = (position, fingerprint, shown)
    return found


def dataset_state(dataset):
    """The dataset's own attributes, each by its fingerprint (see :func:`attributes`):
    two states differ when an attribute was set to another object or small value."""
    return {name: fingerprint for name, (_, fingerprint, _) in attributes(dataset).items()}
