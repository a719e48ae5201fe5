"""The catalog of root causes: one record per code, read by every other part.

The flake8 rules, the doctor's diagnoses, ``doctor explain``, the pytest plugin,
the generated docs (``docs/rules.md``) and the tests all take a cause's code,
title, message, explanation and doc from here, and from nowhere else.
"""
from typing import NamedTuple, Tuple


class Rule(NamedTuple):
    code: str
    title: str
    #: flake8 message after the code, a ``str.format`` template; one line: cause, then fix.
    message: str
    fix_title: str
    #: two to five plain sentences, used by the doctor's ``explanation``.
    explanation: str
    # ruff's doc sections, in this order, Markdown.
    what_it_does: str
    why_bad: str
    example: str
    use_instead: str
    fix_safety: str
    options: str
    references: Tuple[str, ...]
    #: static: a flake8 rule exists (1xx); runtime-only causes (2xx) are False.
    static: bool
    #: host-dependent rules are off unless selected (flake8 ``extend_default_ignore``).
    default_off: bool = False
    #: Fixit-style examples: VALID stay silent, INVALID must report this code.
    valid: Tuple[str, ...] = ()
    invalid: Tuple[str, ...] = ()


RULES = {}  # code -> Rule, filled below in code order


def _add(rule):
    RULES[rule.code] = rule


def get(code):
    return RULES[code]


_HEAD = "from torch.utils.data import DataLoader, Dataset\n\n"
_DS = (_HEAD + "class Numbers(Dataset):\n"
       "    def __init__(self, transform=None):\n"
       "        self.transform = transform\n\n"
       "    def __len__(self):\n        return 8\n\n"
       "    def __getitem__(self, i):\n"
       "        return self.transform(i) if self.transform else i\n\n")


def _guarded(body):
    """A script whose work sits under the guard, as it should."""
    return _DS + "def main():\n" + "".join("    " + line + "\n" for line in body) + (
        "\n\nif __name__ == \"__main__\":\n    main()\n")


_add(Rule(
    code="DLW101",
    title="worker processes started from unguarded module-level code",
    message='unguarded module-level code starts worker processes ({chain}); '
            'move it under if __name__ == "__main__":',
    fix_title='Move the statements that do work under `if __name__ == "__main__":`',
    explanation=(
        "Under spawn and forkserver every worker process starts by re-importing your script "
        "as `__mp_main__`, so module-level code runs again in each worker. Here that code "
        "starts worker processes itself, while the worker is still bootstrapping, and "
        "multiprocessing refuses: the worker dies and the DataLoader reports that it exited "
        "unexpectedly. Put the code that trains under `if __name__ == \"__main__\":` and keep "
        "only imports, definitions and constants at module level."),
    what_it_does=(
        "Finds operations that start worker processes (iterating a `DataLoader` whose "
        "`num_workers` is not provably 0, passing such a loader to a call, "
        "`Process(...).start()`, `Pool(...)`, `ProcessPoolExecutor(...)`, "
        "`torch.multiprocessing.spawn(...)`) that run when the module is imported: at module "
        "level outside `if __name__ == \"__main__\":`, or in a function that such code calls, "
        "in this module or in a module beside it. It reports the module-level statement and "
        "names the chain of calls."),
    why_bad=(
        "With the `spawn` start method (Windows, macOS) and `forkserver` (Linux from "
        "Python 3.14) each worker re-runs the main module. The worker then fails with:\n\n"
        "`RuntimeError: An attempt has been made to start a new process before the current "
        "process has finished its bootstrapping phase.`\n\n"
        "and the parent reports `RuntimeError: DataLoader worker (pid X) exited unexpectedly "
        "with exit code 1. Details are lost due to multiprocessing.` followed by "
        "`RuntimeError: DataLoader worker (pid(s) X) exited unexpectedly`. On Windows a large "
        "dataset gives `BrokenPipeError: [Errno 32] Broken pipe` instead, and under POSIX "
        "spawn the parent can hang inside `w.start()`. It never happens under `fork`, which "
        "is why a script that works on Linux breaks on Windows, macOS or Python 3.14."),
    example="",
    use_instead="",
    fix_safety=(
        "A patch maker is planned: it moves the statements that do work under the guard and "
        "keeps imports, definitions and constants at module level. It changes what runs on "
        "import, so review it when other modules import this one."),
    options="- `--dlw-start-method`: `fork` silences this rule.",
    references=(
        "https://docs.python.org/3/library/multiprocessing.html#multiprocessing-safe-main-import",
        "https://pytorch.org/docs/stable/notes/windows.html",
        "pytorch/pytorch#11139", "pytorch/tutorials#1661", "pytorch/pytorch#73726",
    ),
    static=True,
    invalid=(
        _DS + "loader = DataLoader(Numbers(), batch_size=4, num_workers=2)\n"
              "for batch in loader:\n    print(batch)\n",
        _DS + "loader = DataLoader(Numbers(), num_workers=2)\nfirst = next(iter(loader))\n",
        _DS + "import os\n\nloader = DataLoader(Numbers(), num_workers=os.cpu_count())\n"
              "batches = [b for b in loader]\n",
        _DS + "def train(loader):\n    for batch in loader:\n        pass\n\n\n"
              "train(DataLoader(Numbers(), num_workers=2))\n",
        _DS + "def main():\n    for batch in DataLoader(Numbers(), num_workers=2):\n"
              "        pass\n\n\nmain()\n",
        "import multiprocessing\n\n\ndef work():\n    print('hi')\n\n\n"
        "multiprocessing.Process(target=work).start()\n",
        "from multiprocessing import Pool\n\npool = Pool(2)\nprint(pool.map(abs, [-1, 2]))\n",
        "from concurrent.futures import ProcessPoolExecutor\n\n"
        "with ProcessPoolExecutor() as ex:\n    print(list(ex.map(abs, [-1])))\n",
        "import torch.multiprocessing as mp\n\n\ndef run(rank):\n    pass\n\n\n"
        "mp.spawn(run, nprocs=2)\n",
    ),
    valid=(
        _DS + "if __name__ == \"__main__\":\n"
              "    for batch in DataLoader(Numbers(), num_workers=2):\n        print(batch)\n",
        _DS + "loader = DataLoader(Numbers(), batch_size=4)\nfor batch in loader:\n    pass\n",
        _DS + "loader = DataLoader(Numbers(), num_workers=0)\nprint(list(loader))\n",
        _DS + "loader = DataLoader(Numbers(), num_workers=2)\n\n"
              "if __name__ == \"__main__\":\n    for batch in loader:\n        pass\n",
        _guarded(["for batch in DataLoader(Numbers(), num_workers=2):", "    pass"]),
        "class DataLoader:\n    def __iter__(self):\n        return iter([1, 2])\n\n\n"
        "for batch in DataLoader():\n    pass\n",
    ),
))

_add(Rule(
    code="DLW102",
    title="lambda reaches a DataLoader worker",
    message="lambda passed as {role} is not picklable under {method}; "
            "define a module-level function",
    fix_title="Replace the lambda by a module-level function",
    explanation=(
        "Under spawn and forkserver the DataLoader pickles its dataset, sampler, collate_fn "
        "and worker_init_fn into every worker. Functions are pickled by their qualified name, "
        "and a lambda has none that a worker can import, so starting the workers fails. "
        "Define a named function at module level (use functools.partial to bind arguments)."),
    what_it_does=(
        "Finds a `lambda` that a loader with workers sends to its workers: passed as "
        "`collate_fn`, `worker_init_fn`, `sampler` or `batch_sampler`, or anywhere inside the "
        "dataset argument (a constructor argument such as `transform=lambda x: x`, a "
        "`Compose([..., Lambda(lambda x: ...)])`, a module-level variable bound to a lambda, "
        "or `self.attr = lambda ...` in the dataset's `__init__`)."),
    why_bad=(
        "The worker `Process` object is pickled in the parent at `iter(loader)`, and it "
        "fails there. Python 3.8 to 3.12.4: `AttributeError: Can't pickle local object "
        "'main.<locals>.<lambda>'`; 3.12.5 and 3.13: `AttributeError: Can't get local "
        "object 'main.<locals>.<lambda>'`; 3.14: `_pickle.PicklingError: Can't pickle local "
        "object <function main.<locals>.<lambda> at 0x...>`. A module-level lambda gives "
        "`_pickle.PicklingError: Can't pickle <function <lambda> at 0x...>: attribute lookup "
        "<lambda> on __main__ failed`. torch 2.10 and newer warn first: `UserWarning: Got "
        "pickle error when attempting to start a worker Process.` On Windows the child may "
        "add `EOFError: Ran out of input`, a symptom of the same failure."),
    example="",
    use_instead="",
    fix_safety=(
        "A patch maker is planned: it replaces the lambda by a module-level function named "
        "from its role, binding captured names with `functools.partial`. Safe when the "
        "lambda captures nothing that changes later."),
    options="- `--dlw-start-method`: `fork` silences this rule.",
    references=("pytorch/vision#5801", "pyg-team/pytorch_geometric#2440",
                "vllm-project/guidellm#782", "HazyResearch/cartridges#20"),
    static=True,
    invalid=(
        _guarded(["loader = DataLoader(Numbers(), num_workers=2, collate_fn=lambda b: b)",
                  "print(list(loader))"]),
        _guarded(["loader = DataLoader(Numbers(), num_workers=2,",
                  "                    worker_init_fn=lambda worker_id: None)",
                  "print(list(loader))"]),
        _guarded(["loader = DataLoader(Numbers(transform=lambda x: x * 2), num_workers=2)",
                  "print(list(loader))"]),
        "from torchvision import transforms\n" + _guarded([
            "tf = transforms.Compose([transforms.Lambda(lambda x: x + 1)])",
            "print(list(DataLoader(Numbers(tf), num_workers=2)))"]),
        _DS + "double = lambda x: x * 2\n\n\nif __name__ == \"__main__\":\n"
              "    print(list(DataLoader(Numbers(double), num_workers=2)))\n",
        _HEAD + "class Squares(Dataset):\n    def __init__(self):\n"
                "        self.fn = lambda x: x * x\n\n    def __len__(self):\n        return 4\n\n"
                "    def __getitem__(self, i):\n        return self.fn(i)\n\n\n"
                "if __name__ == \"__main__\":\n"
                "    print(list(DataLoader(Squares(), num_workers=2)))\n",
    ),
    valid=(
        _guarded(["loader = DataLoader(Numbers(), collate_fn=lambda b: b)",
                  "print(list(loader))"]),
        _guarded(["loader = DataLoader(Numbers(), num_workers=0, collate_fn=lambda b: b)",
                  "print(list(loader))"]),
        _DS + "def collate(batch):\n    return batch\n\n\n" + "if __name__ == \"__main__\":\n"
              "    print(list(DataLoader(Numbers(), num_workers=2, collate_fn=collate)))\n",
        "import threading\n" + _guarded([
            "threading.Thread(target=lambda: print('hi')).start()",
            "order = sorted(range(8), key=lambda i: -i)",
            "print(list(DataLoader(Numbers(), num_workers=2, sampler=order)))"]),
        _HEAD + "class Lazy(Dataset):\n    def __len__(self):\n        return 4\n\n"
                "    def __getitem__(self, i):\n        scale = lambda x: x * 2\n"
                "        return scale(i)\n\n\nif __name__ == \"__main__\":\n"
                "    print(list(DataLoader(Lazy(), num_workers=2)))\n",
    ),
))

_add(Rule(
    code="DLW103",
    title="locally defined function or class reaches a DataLoader worker",
    message="{kind} '{name}' defined inside {scope}() reaches a worker as {role} and is "
            "not picklable under {method}; define it at module level",
    fix_title="Move the nested function or class to module level",
    explanation=(
        "A function or class defined inside another function is pickled by a qualified name "
        "like `main.<locals>.collate`, which no worker can import. Under spawn and "
        "forkserver the DataLoader pickles what it sends to its workers, so starting them "
        "fails. Define it at module level; bind what it captured with functools.partial or "
        "constructor arguments."),
    what_it_does=(
        "Finds a function or class defined inside a function body that a loader with workers "
        "sends to its workers: as `collate_fn`, `worker_init_fn`, `sampler` or "
        "`batch_sampler`, through `functools.partial(nested)`, as a bound method of a nested "
        "class, or as the dataset (a `Dataset` subclass defined in a function). It reports the "
        "loader argument that carries it."),
    why_bad=(
        "Python 3.8 to 3.12.4: `AttributeError: Can't pickle local object "
        "'main.<locals>.collate'`; 3.12.5 and 3.13: `AttributeError: Can't get local object "
        "'main.<locals>.collate'`; 3.14: `_pickle.PicklingError: Can't pickle local object "
        "<function main.<locals>.collate at 0x...>`, raised in the parent at `iter(loader)` "
        "after torch's `UserWarning: Got pickle error when attempting to start a worker "
        "Process.`"),
    example="",
    use_instead="",
    fix_safety=(
        "A patch maker is planned: it hoists the definition to module level and turns the "
        "names it captured into parameters bound with `functools.partial` (functions) or "
        "constructor arguments (classes). Review it when the captured values change."),
    options="- `--dlw-start-method`: `fork` silences this rule.",
    references=("pyg-team/pytorch_geometric#1126", "cjrh/deadpool#191",
                "python/cpython#139806"),
    static=True,
    invalid=(
        _guarded(["def collate(batch):", "    return batch", "",
                  "print(list(DataLoader(Numbers(), num_workers=2, collate_fn=collate)))"]),
        "import functools\n" + _guarded([
            "def collate(batch, scale):", "    return [b * scale for b in batch]", "",
            "fn = functools.partial(collate, scale=2)",
            "print(list(DataLoader(Numbers(), num_workers=2, collate_fn=fn)))"]),
        _guarded(["class Collator:", "    def collate(self, batch):", "        return batch",
                  "", "c = Collator()",
                  "print(list(DataLoader(Numbers(), num_workers=2, collate_fn=c.collate)))"]),
        _HEAD + "def main():\n    class Local(Dataset):\n        def __len__(self):\n"
                "            return 4\n\n        def __getitem__(self, i):\n            return i\n\n"
                "    print(list(DataLoader(Local(), num_workers=2)))\n\n\n"
                "if __name__ == \"__main__\":\n    main()\n",
    ),
    valid=(
        _DS + "def collate(batch):\n    return batch\n\n\n" + "if __name__ == \"__main__\":\n"
              "    print(list(DataLoader(Numbers(), num_workers=2, collate_fn=collate)))\n",
        _guarded(["def collate(batch):", "    return batch", "",
                  "print(list(DataLoader(Numbers(), collate_fn=collate)))"]),
        "import functools\n" + _DS + "def collate(batch, scale):\n"
        "    return [b * scale for b in batch]\n\n\nif __name__ == \"__main__\":\n"
        "    fn = functools.partial(collate, scale=2)\n"
        "    print(list(DataLoader(Numbers(), num_workers=2, collate_fn=fn)))\n",
        _guarded(["def key(i):", "    return -i", "",
                  "order = sorted(range(8), key=key)",
                  "print(list(DataLoader(Numbers(), num_workers=2, sampler=order)))"]),
    ),
))

_add(Rule(
    code="DLW104",
    title="object defined in the __main__ guard or __main__.py reaches a worker",
    message="{kind} '{name}' defined {where} reaches a worker as {role}; "
            "spawned workers cannot import it, {fix}",
    fix_title="Define it at module level above the guard, or in an importable module",
    explanation=(
        "A spawned worker re-imports your script as `__mp_main__` without running the "
        "`if __name__ == \"__main__\":` block, so a class or function defined only inside "
        "that block does not exist there and unpickling it in the worker fails. A package's "
        "`__main__.py` run with `python -m` is not re-imported at all. Move the definition "
        "to module level above the guard, or into an importable module."),
    what_it_does=(
        "Finds a class or function defined inside the `if __name__ == \"__main__\":` block, "
        "or anywhere in a file named `__main__.py`, that a loader with workers sends to its "
        "workers (as the dataset, `collate_fn`, `worker_init_fn`, `sampler`, "
        "`batch_sampler`). Lambdas are reported by DLW102 wherever they are defined."),
    why_bad=(
        "The error is raised in the worker while it unpickles. Script run by path: "
        "`AttributeError: Can't get attribute 'MyDataset' on <module '__mp_main__' from "
        "'/path/script.py'>` (Python 3.13 and older), `AttributeError: module '__mp_main__' "
        "has no attribute 'MyDataset'` (3.14). `python -m pkg` with the code in "
        "`pkg/__main__.py`: `AttributeError: Can't get attribute 'MyDataset' on <module "
        "'__main__' (built-in)>` (3.11 and older), `... on <module '__main__' (<class "
        "'_frozen_importlib.BuiltinImporter'>)>` (3.12, 3.13). The parent then reports "
        "`RuntimeError: DataLoader worker (pid(s) X) exited unexpectedly`."),
    example="",
    use_instead="",
    fix_safety=(
        "A patch maker is planned: it moves the definition out of the guard to module level, "
        "above the guard. For `__main__.py` no safe patch exists: move the definitions to a "
        "module of the package and import them."),
    options="- `--dlw-start-method`: `fork` silences this rule.",
    references=("Sleepychord/CogLTX#2", "pytorch/pytorch#59451",
                "https://docs.python.org/3/library/multiprocessing.html"
                "#the-spawn-and-forkserver-start-methods"),
    static=True,
    invalid=(
        _HEAD + "if __name__ == \"__main__\":\n    class Numbers(Dataset):\n"
                "        def __len__(self):\n            return 4\n\n"
                "        def __getitem__(self, i):\n            return i\n\n"
                "    print(list(DataLoader(Numbers(), num_workers=2)))\n",
        _DS + "if __name__ == \"__main__\":\n    def collate(batch):\n        return batch\n\n"
              "    print(list(DataLoader(Numbers(), num_workers=2, collate_fn=collate)))\n",
        _DS + "if __name__ == \"__main__\":\n    def seed(worker_id):\n        pass\n\n"
              "    loader = DataLoader(Numbers(), num_workers=2, worker_init_fn=seed)\n"
              "    print(list(loader))\n",
        _HEAD + "if __name__ == \"__main__\":\n    class Numbers(Dataset):\n"
                "        def __len__(self):\n            return 4\n\n"
                "        def __getitem__(self, i):\n            return i\n\n"
                "    ds = Numbers()\n    loader = DataLoader(ds, batch_size=2, num_workers=4)\n"
                "    print(list(loader))\n",
    ),
    valid=(
        _DS + "if __name__ == \"__main__\":\n"
              "    print(list(DataLoader(Numbers(), num_workers=2)))\n",
        _HEAD + "if __name__ == \"__main__\":\n    class Numbers(Dataset):\n"
                "        def __len__(self):\n            return 4\n\n"
                "        def __getitem__(self, i):\n            return i\n\n"
                "    print(list(DataLoader(Numbers())))\n",
        _DS + "def collate(batch):\n    return batch\n\n\nif __name__ == \"__main__\":\n"
              "    print(list(DataLoader(Numbers(), num_workers=2, collate_fn=collate)))\n",
        _DS + "if __name__ == \"__main__\":\n    def collate(batch):\n        return batch\n\n"
              "    print(list(DataLoader(Numbers(), num_workers=0, collate_fn=collate)))\n",
    ),
))
