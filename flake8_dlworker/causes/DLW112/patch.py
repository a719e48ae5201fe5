"""DLW112: a DistributedSampler never told the epoch -> tell it, at the top of the loop.

The finding's message names the epoch loop's line and how the sampler is reached (its
name, or ``loader.sampler``). Where the loop is ``for NAME in range(...)`` (also
``trange``, ``tqdm(range(...))``) with an indented body, ``SAMPLER.set_epoch(NAME)``
becomes its first statement. Any other loop (a tuple target, a one-line body, an epoch
counted some other way) gets no patch: where the epoch number comes from is then the
user's to say, and the fix is in words.
"""
import re

import libcst as cst

from doctor.patches import _cst

CODE = "DLW112"
STATIC = True
_MESSAGE = re.compile(r"the loop at line (\d+) .*?calling ([\w.]+)\.set_epoch\(epoch\)")
_RANGES = ("range", "trange")


def fix(source, finding, facts):
    match = _MESSAGE.search(getattr(finding, "text", "") or "")
    if not match:
        return None
    line, sampler = int(match.group(1)), match.group(2)
    tree = _cst.Tree(source)
    for loop in tree.nodes(cst.For):
        if tree.line(loop) != line or not _counts_epochs(loop):
            continue
        if not isinstance(loop.target, cst.Name) or not isinstance(loop.body, cst.IndentedBlock):
            return None
        call = cst.parse_statement("%s.set_epoch(%s)\n" % (sampler, loop.target.value))
        body = loop.body.with_changes(body=[call, *loop.body.body])
        return tree.module.deep_replace(loop, loop.with_changes(body=body)).code
    return None


def _counts_epochs(loop):
    calls = [loop.iter] if isinstance(loop.iter, cst.Call) else []
    if calls and calls[0].args and isinstance(calls[0].args[0].value, cst.Call):
        calls.append(calls[0].args[0].value)
    return any(isinstance(c.func, cst.Name) and c.func.value in _RANGES for c in calls)
