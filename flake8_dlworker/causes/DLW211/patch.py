"""DLW211: a dataset changed after persistent workers took their copy -> make the loader
non-persistent.

``persistent_workers=True`` becomes ``persistent_workers=False`` on the loader the finding
names (its message gives the loader's line): each epoch then starts new workers, which
receive the dataset as the main process has it, so the change reaches them. It is the
one fix that is right for every dataset; it costs the workers' start-up at every epoch.
Moving the value into the sampler or a shared ``multiprocessing.Value`` keeps the
workers but changes how the dataset reads it, which the record's "Fix safety" gives in
words.
"""
import re

import libcst as cst

from doctor.patches import _cst

CODE = "DLW211"
STATIC = True
_LOADER_LINE = re.compile(r"the DataLoader at line (\d+)")


def fix(source, finding, facts):
    match = _LOADER_LINE.search(finding.text)
    if not match:
        return None
    line = int(match.group(1))
    tree = _cst.Tree(source)
    for call in tree.nodes(cst.Call):
        if tree.line(call) != line:
            continue
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "persistent_workers":
                return tree.module.deep_replace(
                    arg, arg.with_changes(value=cst.Name("False"))).code
    return None
