"""The plugin's own cost, in-process: prefilter and analysis time on the same files
that bench/lint_bench.py lints, without flake8's run-to-run noise around it.

    python bench/analysis_cost.py [--all] [--corpus DIR ...]
"""
import argparse
import ast
import time
import warnings

from lint_bench import corpus

from flake8_dlworker.plugin import findings, might_start_workers


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every torch source file")
    parser.add_argument("--corpus", nargs="*", help="directories instead of torch")
    args = parser.parse_args(argv)
    files, lines = corpus(args)
    t_filter = t_parse = t_analysis = 0.0
    passed = found = 0
    for path in files:
        with open(path, "rb") as handle:
            source = handle.read().decode("utf-8", "replace")
        start = time.perf_counter()
        hit = might_start_workers(source)
        t_filter += time.perf_counter() - start
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
        t_parse += time.perf_counter() - start  # flake8 pays this anyway, for pyflakes
        if not hit:
            continue
        passed += 1
        start = time.perf_counter()
        found += len(findings(tree, path))
        t_analysis += time.perf_counter() - start
    print("%-28s %10d" % ("files", len(files)))
    print("%-28s %10d" % ("lines", lines))
    print("%-28s %10d" % ("files past the prefilter", passed))
    print("%-28s %10d" % ("findings", found))
    print("%-28s %10.3f s" % ("prefilter", t_filter))
    print("%-28s %10.3f s" % ("analysis", t_analysis))
    print("%-28s %10.3f s" % ("ast.parse (for scale)", t_parse))


if __name__ == "__main__":
    main()
