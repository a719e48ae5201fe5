"""Plugin overhead: flake8 with flake8-dlworker against bare flake8 on the same files.

flake8 runs every installed plugin whatever --select says, so each configuration
gets its own virtual environment under bench/.envs/: "bare" has flake8 alone,
"plugin" has flake8 and this package.  Both run flake8's default checks with one
job over the same corpus (by default a slice of the installed torch sources;
--all for every torch file), interleaved, median of --repeat runs.

    python bench/lint_bench.py [--all] [--repeat 3] [--corpus DIR ...]
"""
import argparse
import statistics
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENVS = ROOT / "bench" / ".envs"
DEFAULT_SLICE = ("utils", "nn", "optim", "multiprocessing")


def torch_dir():
    out = subprocess.run(
        [sys.executable, "-c", "import torch, os; print(os.path.dirname(torch.__file__))"],
        capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def corpus(args):
    if args.corpus:
        roots = [Path(p) for p in args.corpus]
    else:
        base = torch_dir()
        roots = [base] if args.all else [base / name for name in DEFAULT_SLICE]
        try:
            import torchvision  # noqa: F401  (only its path is used)
            roots.append(Path(torchvision.__file__).parent)
        except ImportError:
            pass
    files = sorted(str(p) for root in roots for p in root.rglob("*.py"))
    lines = sum(1 for f in files for _ in open(f, "rb"))
    return files, lines


def python_of(env):
    return str(env / "bin" / "python")


def make_env(name, with_plugin):
    env = ENVS / name
    marker = env / ".ready"
    pip = [python_of(env), "-m", "pip", "install", "-q"]
    if marker.exists() and marker.stat().st_mtime > (ROOT / "pyproject.toml").stat().st_mtime:
        if with_plugin:  # the sources may have changed since the last run
            subprocess.run(pip + ["--no-deps", "--force-reinstall", str(ROOT)], check=True)
        return env
    venv.EnvBuilder(clear=True, with_pip=True).create(env)
    flake8 = subprocess.run([sys.executable, "-c", "import flake8; print(flake8.__version__)"],
                            capture_output=True, text=True).stdout.strip()
    subprocess.run(pip + ["flake8==" + flake8 if flake8 else "flake8"], check=True)
    if with_plugin:
        subprocess.run(pip + [str(ROOT)], check=True)
    marker.touch()
    return env


def time_flake8(env, files):
    cmd = [python_of(env), "-m", "flake8", "--isolated", "--jobs", "1", "--exit-zero"]
    start = time.perf_counter()
    # cwd outside the repository: its egg-info would register the plugin in "bare" too
    subprocess.run(cmd + files, stdout=subprocess.DEVNULL, check=True, cwd=str(ENVS))
    return time.perf_counter() - start


def import_ms(env, module, repeat=5):
    code = ("import time; t = time.perf_counter(); import %s; "
            "print((time.perf_counter() - t) * 1000)" % module)
    runs = [float(subprocess.run([python_of(env), "-c", code], capture_output=True, text=True,
                                 check=True, cwd=str(ENVS)).stdout) for _ in range(repeat)]
    return statistics.median(runs)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every torch source file")
    parser.add_argument("--repeat", type=int, default=3, help="runs per configuration")
    parser.add_argument("--corpus", nargs="*", help="directories to lint instead of torch")
    args = parser.parse_args(argv)

    files, lines = corpus(args)
    bare, plugin = make_env("bare", False), make_env("plugin", True)
    times = {"bare": [], "plugin": []}
    for _ in range(args.repeat):
        times["bare"].append(time_flake8(bare, files))
        times["plugin"].append(time_flake8(plugin, files))
    t_bare = statistics.median(times["bare"])
    t_plugin = statistics.median(times["plugin"])
    print("%-22s %10s" % ("files", len(files)))
    print("%-22s %10s" % ("lines", lines))
    print("%-22s %10.2f s" % ("bare flake8", t_bare))
    print("%-22s %10.2f s" % ("flake8 + dlworker", t_plugin))
    print("%-22s %+9.1f %%" % ("overhead (median)", (t_plugin / t_bare - 1) * 100))
    # the fastest run of each is the least disturbed by the rest of the machine
    best = min(times["plugin"]) / min(times["bare"]) - 1
    print("%-22s %+9.1f %%" % ("overhead (best run)", best * 100))
    print("%-22s %10.1f ms" % ("import flake8_dlworker", import_ms(plugin, "flake8_dlworker")))
    print("%-22s %10.1f ms" % ("import .plugin", import_ms(plugin, "flake8_dlworker.plugin")))


if __name__ == "__main__":
    main()
