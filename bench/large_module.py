"""Linear in file size: a generated module of about 5 MB, thousands of functions, one
DataLoader, checked by the analysis in well under 5 s.

The module mixes what grows with real files: top-level functions that call each other,
classes with methods, unguarded module-level calls and assignments, and a single
loader at the end.  The time is the CPU time of ``flake8_dlworker.plugin.findings`` on
the parsed tree (parsing is flake8's own cost and is reported apart); CPU time, so that
other work on the host does not count.

    python bench/large_module.py [--megabytes 5] [--limit 5]
"""
import argparse
import ast
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flake8_dlworker.plugin import findings  # noqa: E402

HEADER = '''"""Generated: many functions, one DataLoader."""
import torch
from torch.utils.data import DataLoader, TensorDataset

'''

BLOCK = '''

def step_{i}(values, scale={i}):
    """Scale, shift and sum: {i}."""
    total = 0
    for value in values:
        total += helper_{prev}(value) * scale
    result = [v + {i} for v in values if v % 7 != {mod}]
    return total + sum(result) + len(str(result))


def helper_{i}(value):
    return step_{prev}([value, value + 1], scale=2) if value < 0 else value * {i}


class Block{i}:
    def __init__(self, width={i}):
        self.width = width
        self.table = {{"a": width, "b": width + 1, "c": [width, width * 2]}}

    def forward(self, values):
        return [helper_{i}(v) + self.width for v in values]


CONSTANT_{i} = helper_{i}({mod})
'''

FOOTER = '''

def train():
    loader = DataLoader(TensorDataset(torch.arange(16.0)), batch_size=4, num_workers=2)
    for (batch,) in loader:
        print(batch.sum().item())


train()
'''


def generate(megabytes):
    parts, size, i = [HEADER], len(HEADER), 0
    while size < megabytes * 1024 * 1024:
        block = BLOCK.format(i=i, prev=max(i - 1, 0), mod=i % 7)
        parts.append(block)
        size += len(block)
        i += 1
    parts.append(FOOTER)
    return "".join(parts), i


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=5.0)
    parser.add_argument("--limit", type=float, default=5.0,
                        help="seconds the analysis may take (exit status 1 above it)")
    args = parser.parse_args(argv)
    source, blocks = generate(args.megabytes)
    start = time.process_time()
    tree = ast.parse(source, "generated.py")
    parsed = time.process_time()
    found = findings(tree, "generated.py")
    done = time.process_time()
    functions = sum(isinstance(n, ast.FunctionDef) for n in ast.walk(tree))
    print("module: %.1f MB, %d lines, %d functions, %d classes" % (
        len(source) / 2 ** 20, source.count("\n"), functions, blocks))
    print("CPU time: parse %.2f s, analysis %.2f s (limit %.1f s)" % (
        parsed - start, done - parsed, args.limit))
    for finding in found:
        print("  %d:%d %s %s" % finding)
    codes = [f.code for f in found]
    if codes != ["DLW101"]:
        print("expected exactly one DLW101 finding, got %s" % codes)
        return 1
    return 0 if done - parsed <= args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
