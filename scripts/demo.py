"""`make demo`: lint the reproducers in fixtures/ and explain each finding.

Runs the real `flake8 --select DLW` over fixtures/, then, per code found, prints
the catalog's title, explanation and fix.
"""
import re
import subprocess
import sys
from pathlib import Path

from flake8_dlworker.catalog import RULES

ROOT = Path(__file__).resolve().parents[1]
FINDING = re.compile(r"^(?P<where>.+?:\d+:\d+): (?P<code>DLW\d{3}) (?P<text>.*)$")


def main():
    cmd = [sys.executable, "-m", "flake8", "--isolated", "--select", "DLW", "fixtures"]
    print("$ flake8 --select DLW fixtures/\n")
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit("flake8 failed: " + out.stderr.strip().splitlines()[-1])
    seen = {}
    for line in out.stdout.splitlines():
        print(line)
        match = FINDING.match(line)
        if match:
            seen.setdefault(match["code"], []).append(match["where"])
    print("\n%d findings in %d rules. What they mean:\n" % (
        sum(map(len, seen.values())), len(seen)))
    for code in sorted(seen):
        rule = RULES[code]
        print("%s  %s  (%d findings)" % (code, rule.title, len(seen[code])))
        print("    why: " + rule.explanation)
        print("    fix: " + rule.fix_title + "\n")
    print("Full docs: docs/rules.md")


if __name__ == "__main__":
    main()
