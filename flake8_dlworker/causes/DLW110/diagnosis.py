"""DLW110: more workers than the host's CPUs.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
import re

from doctor.rulekit import Diagnosis, locate, rule
from flake8_dlworker.catalog import RULES

CODE = "DLW110"
#: the error texts the record lists for it
SIGNATURES = RULES[CODE].texts("signatures")


@rule(order=180)
def dlw110(ev):
    for warning in ev.warnings:
        match = re.search(SIGNATURES[0], warning)  # torch's warning: workers, CPUs
        if match:
            diag = Diagnosis(CODE, "certain", [warning.split(". ")[0] + "."])
            diag.evidence.append("num_workers=%s, usable CPUs: %s" % match.groups())
            for loader in ev.loaders:
                if str(loader.get("num_workers")) == match.group(1) and loader.get("line"):
                    diag.path, diag.line = loader["path"], loader["line"]
                    return diag
            return locate(diag, ev)
    return None
