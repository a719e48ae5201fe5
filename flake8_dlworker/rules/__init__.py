"""The static rules: small functions over a module's facts, each yielding Findings.

A cause's own rule is its folder's ``rule.py`` (found by the catalog); the rules of
several causes are the modules here (:data:`SHARED`). Each has ``findings(scan)``:
the findings of one module, from the :class:`Scan` the plugin makes once per module.
"""
from typing import Any, List, NamedTuple

#: the modules here that are rules of several causes (the others are their helpers)
SHARED = ("pickling", "state")


class Finding(NamedTuple):
    line: int
    col: int
    code: str
    text: str  # the message after the code


class Scan(NamedTuple):
    """What every rule reads of one module."""
    facts: Any           # analysis.module.ModuleFacts
    project: Any         # analysis.project.Project: the modules beside it, read lazily
    start_method: str
    host: Any            # plugin.Host: None fields turn the host's rules off
    notebook: bool       # the module is a notebook's cells end to end
    loaders: List        # (call, scope) of every DataLoader call
    workers: List        # those of them that may start workers
