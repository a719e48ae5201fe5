"""The catalog of root causes: one record per code, read by every other part.

The flake8 rules, the doctor's diagnoses, ``doctor explain``, the pytest plugin,
the generated docs (``docs/rules.md``) and the tests all take a cause's code,
title, message, explanation and doc from here, and from nowhere else.

Importing this module must stay cheap: it imports nothing beyond ``typing``.
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

#: the published docs/rules.md; each rule's section is at ``#`` + its code in lower case
RULES_DOC_URL = "https://github.com/flake8-dlworker/flake8-dlworker/blob/main/docs/rules.md"


def _add(rule):
    # the doc's Example / Use instead are the first INVALID / VALID example, not a copy
    if not rule.example and rule.invalid:
        rule = rule._replace(example=rule.invalid[0])
    if not rule.use_instead and rule.valid:
        rule = rule._replace(use_instead=rule.valid[0])
    RULES[rule.code] = rule


def get(code):
    return RULES[code]


# --- helpers for writing the records ---------------------------------------------

def _dedent(text):
    """``textwrap.dedent`` plus strip of the first newline, without importing textwrap."""
    lines = text.split("\n")
    if lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines.pop()
    indents = [len(line) - len(line.lstrip(" ")) for line in lines if line.strip()]
    cut = min(indents) if indents else 0
    return "\n".join(line[cut:] if line.strip() else "" for line in lines) + "\n"


def _doc(text):
    """A Markdown section: dedented, without the trailing newline."""
    return _dedent(text).rstrip("\n")


def _text(text):
    """A plain paragraph written over several source lines: one line of text."""
    return " ".join(text.split())


_IMPORT = "from torch.utils.data import DataLoader, Dataset\n"

#: a tiny map-style dataset most examples share
_SQUARES = _dedent('''
    class Squares(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            return i * i
''')

#: the same dataset with a transform attribute, for what reaches a worker through it
_SQUARES_T = _dedent('''
    class Squares(Dataset):
        def __init__(self, transform=None):
            self.transform = transform

        def __len__(self):
            return 8

        def __getitem__(self, i):
            x = float(i * i)
            return self.transform(x) if self.transform else x
''')


def _module(body, imports="", dataset=_SQUARES):
    """A complete tiny module: imports, the shared dataset class, then ``body``."""
    parts = [imports + _IMPORT]
    if dataset:
        parts.append(dataset)
    parts.append(_dedent(body))
    return "\n\n".join(parts)


def _examples(*sources):
    return tuple(sources)


# --- shared Markdown fragments ---------------------------------------------------

_START_METHOD_OPTION = _doc('''
    - `--dlw-start-method {spawn,forkserver,fork}` (default `spawn`): the start method
      your workers will use. With `fork` nothing is pickled and the main script is not
      re-imported, so this rule is silent; keep the default if the code must also run on
      Windows, macOS, or Linux with Python 3.14 or later (where `forkserver` is the default).
''')

_PICKLE_WARNING = _doc('''
    From torch 2.10 on, the loader first warns, then re-raises the pickling error:
    `UserWarning: Got pickle error when attempting to start a worker Process. This might be
    because the worker Process arguments are not picklable. Python 3.14+ changed the
    multiprocessing start method in non-Mac POSIX platforms to 'forkserver', which requires
    the worker Process arguments to be picklable. You can also try
    multiprocessing.set_start_method('fork').`
''')

_EOF_NOTE = _doc('''
    On Windows a child traceback ending in `EOFError: Ran out of input` (at
    `reduction.pickle.load(from_parent)`) often follows; it is a symptom, the parent's
    pickling error above it is the cause.
''')

# --- DLW101 ------------------------------------------------------------------------

_add(Rule(
    code="DLW101",
    title="unguarded module-level code starts worker processes",
    message=('unguarded module-level code starts worker processes ({chain}); '
             'move it under if __name__ == "__main__":'),
    fix_title='Move the code that starts workers under if __name__ == "__main__":',
    explanation=_text('''
        Under spawn and forkserver every worker re-imports the main script, so code at the
        top level of the module runs again inside each worker. Here that code iterates a
        DataLoader with workers (or starts processes some other way), so each worker tries
        to start workers of its own and stops with the "bootstrapping phase" RuntimeError;
        the parent then only sees a worker that exited unexpectedly. Put the executable
        code in a main() function called under if __name__ == "__main__":, and keep the
        Dataset class, collate_fn and worker_init_fn at module level above it.
    '''),
    what_it_does=_doc('''
        Checks for module-level code, not protected by `if __name__ == "__main__":`, that
        starts worker processes: iterating a `DataLoader` whose `num_workers` may be above
        0 (`for`, `next(iter(...))`, `list(...)`, comprehensions, passing the loader to a
        function that iterates it), calling a function that does so, or starting processes
        directly (`multiprocessing.Process(...).start()`, `Pool(...)`,
        `ProcessPoolExecutor()`, `torch.multiprocessing.spawn(...)`). The message names
        the chain of calls from the module level to the start.
    '''),
    why_bad=_doc('''
        The `spawn` and `forkserver` start methods re-import the main script in every child
        as `__mp_main__`, so that the child can find the functions and classes it is sent.
        Unguarded top-level code therefore runs again in every worker (a top-level `print`
        shows up once more per worker), and when that code starts processes the child
        refuses, in `multiprocessing/spawn.py`'s `_check_not_importing_main`:

        ```text
        RuntimeError:
                An attempt has been made to start a new process before the
                current process has finished its bootstrapping phase.

                This probably means that you are not using fork to start your
                child processes and you have forgotten to use the proper idiom
                in the main module:

                    if __name__ == '__main__':
                        freeze_support()
                        ...

                The "freeze_support()" line can be omitted if the program
                is not going to be frozen to produce an executable.
        ```

        CPython 3.11 and later append `To fix this issue, refer to the "Safe importing of
        main module" section in https://docs.python.org/3/library/multiprocessing.html`;
        3.10 and earlier end at "...produce an executable.".

        The parent sees only the worker's death. On Linux and macOS:
        `RuntimeError: DataLoader worker (pid X) exited unexpectedly with exit code 1.
        Details are lost due to multiprocessing. Rerunning with num_workers=0 may give
        better error trace.`, followed by "The above exception was the direct cause of the
        following exception:" and `RuntimeError: DataLoader worker (pid(s) X) exited
        unexpectedly`. On Windows only the last, generic line appears. When the dataset is
        large, the parent instead gets `BrokenPipeError: [Errno 32] Broken pipe` (Windows,
        forkserver) or hangs forever inside `w.start()` (POSIX spawn, the macOS default).

        It never happens with `fork`, which is why a script that ran for years on Linux
        breaks on Windows, on macOS (spawn since Python 3.8) and on Linux from Python 3.14
        on, where `forkserver` became the default. `freeze_support()` does not fix it: it
        does nothing unless the program is a frozen executable.
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        The doctor's patch (`python -m doctor --verify`, `check --diff`) moves the
        statements that do work (loops, calls, assignments whose value calls something) in
        their order under `if __name__ == "__main__":` at the end of the module, or into the
        guard the module already ends with; a script that calls its `main()` unguarded gets
        the call guarded. Imports, definitions, constants, and any statement whose names a
        definition that stays reads, stay at module level where workers find them; when the
        statement that starts workers is among those, there is no patch. The patch needs
        review: other modules that import names those statements bound no longer find them.
    '''),
    options=_START_METHOD_OPTION,
    references=(
        "pytorch/pytorch#11139",
        "pytorch/tutorials#1661",
        "pytorch/pytorch#73726",
        "pyg-team/pytorch_geometric#3363",
        "pytorch/pytorch#31465",
        "https://pytorch.org/docs/stable/notes/windows.html",
        "https://docs.python.org/3/library/multiprocessing.html#multiprocessing-safe-main-import",
    ),
    static=True,
    invalid=_examples(
        _module('''
            loader = DataLoader(Squares(), batch_size=4, num_workers=2)
            for batch in loader:
                print(batch)
        '''),
        _dedent('''
            import torch.utils.data as tud


            class Squares(tud.Dataset):
                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return i * i


            loader = tud.DataLoader(Squares(), batch_size=4, num_workers=2)
            first = next(iter(loader))
            print(first)
        '''),
        _module('''
            loader = DataLoader(Squares(), batch_size=4, num_workers=2)
            batches = list(loader)
        '''),
        _module('''
            loader = DataLoader(Squares(), batch_size=4, num_workers=2)
            sizes = [len(batch) for batch in loader]
        '''),
        _module('''
            def train(loader):
                for batch in loader:
                    print(batch)


            loader = DataLoader(Squares(), batch_size=4, num_workers=2)
            train(loader)
        '''),
        _module('''
            def main():
                loader = DataLoader(Squares(), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)


            main()
        '''),
        _module('''
            def work():
                print("working")


            multiprocessing.Process(target=work).start()
        ''', imports="import multiprocessing\n\n"),
        _module('''
            with Pool(2) as pool:
                squares = pool.map(abs, range(8))
            loader = DataLoader(squares, batch_size=4)
        ''', imports="from multiprocessing import Pool\n\n", dataset=""),
        _module('''
            with ProcessPoolExecutor() as executor:
                squares = list(executor.map(abs, range(8)))
            loader = DataLoader(squares, batch_size=4)
        ''', imports="from concurrent.futures import ProcessPoolExecutor\n\n", dataset=""),
        _module('''
            def run(rank):
                loader = DataLoader(Squares(), batch_size=4, num_workers=2)
                for batch in loader:
                    print(rank, batch)


            torch.multiprocessing.spawn(run, nprocs=2)
        ''', imports="import torch.multiprocessing\n"),
    ),
    valid=_examples(
        _module('''
            def main():
                loader = DataLoader(Squares(), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
        _module('''
            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            loader = DataLoader(Squares(), batch_size=4, num_workers=0)
            for batch in loader:
                print(batch)
        '''),
        _module('''
            loader = DataLoader(Squares(), batch_size=4)
            batches = list(loader)
        '''),
        _module('''
            loader = DataLoader(Squares(), batch_size=4, num_workers=2)

            if __name__ == "__main__":
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            def train(loader):
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                train(DataLoader(Squares(), batch_size=4, num_workers=2))
        '''),
        _dedent('''
            from torch.utils.data import Dataset


            class DataLoader:
                """Not torch's: iterates in the calling process."""

                def __init__(self, dataset, num_workers=0):
                    self.dataset = dataset
                    self.num_workers = num_workers

                def __iter__(self):
                    return (self.dataset[i] for i in range(len(self.dataset)))


            class Squares(Dataset):
                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return i * i


            for item in DataLoader(Squares(), num_workers=2):
                print(item)
        '''),
        _module('''
            if __name__ == "__main__":
                with Pool(2) as pool:
                    squares = pool.map(abs, range(8))
                print(list(DataLoader(squares, batch_size=4, num_workers=2)))
        ''', imports="from multiprocessing import Pool\n\n", dataset=""),
        _module('''
            def run(rank):
                print(rank)


            if __name__ == "__main__":
                torch.multiprocessing.spawn(run, nprocs=2)
        ''', imports="import torch.multiprocessing\n"),
    ),
))


# --- DLW102 ------------------------------------------------------------------------

_add(Rule(
    code="DLW102",
    title="lambda reaches a DataLoader worker",
    message="lambda passed as {role} is not picklable under {method}; define a module-level function",
    fix_title="Replace the lambda with a function defined at module level",
    explanation=_text('''
        Under spawn and forkserver the DataLoader pickles its dataset, collate_fn and
        worker_init_fn into every worker when iteration starts. Functions are pickled by
        their importable name, and a lambda has none, so starting the workers fails with a
        "Can't pickle" error before any batch is loaded. Replace the lambda with a def at
        module level (functools.partial of a module-level function also works); with fork,
        the Linux default up to Python 3.13, nothing is pickled, which is why the same code
        ran there.
    '''),
    what_it_does=_doc('''
        Checks for a `lambda` that a `DataLoader` with workers sends to its worker
        processes: passed as `collate_fn` or `worker_init_fn`, given to the dataset's
        constructor (a `transform=`, a `Compose([...])` containing
        `transforms.Lambda(lambda ...)`), bound to a module-level name that is later passed
        in, or stored on the dataset as an attribute in its `__init__`
        (`self.fn = lambda ...`).

        The sampler and batch sampler are not reported: they stay in the main process
        and are never pickled (checked against torch 2.13's `_MultiProcessingDataLoaderIter`,
        whose worker arguments are the dataset, `collate_fn` and `worker_init_fn`).
    '''),
    why_bad=_doc('''
        Under `spawn` and `forkserver` the worker `Process` object, which holds the dataset,
        `collate_fn` and `worker_init_fn`, is pickled in the parent at `iter(loader)`.
        Functions pickle by qualified name, and a lambda's name (`<lambda>`) cannot be looked
        up, so the error is raised in the parent.

        %s

        A lambda defined inside a function (`collate_fn=lambda b: b` in `main()`):

        | Python | Error |
        |---|---|
        | 3.8 to 3.12.4 | `AttributeError: Can't pickle local object 'main.<locals>.<lambda>'` |
        | 3.12.5+, 3.13 | `AttributeError: Can't get local object 'main.<locals>.<lambda>'` |
        | 3.14 | `_pickle.PicklingError: Can't pickle local object <function main.<locals>.<lambda> at 0x...>`, with `when serializing ...` notes naming the path |

        A lambda at module level (3.8 to 3.13):
        `_pickle.PicklingError: Can't pickle <function <lambda> at 0x...>: attribute lookup
        <lambda> on __main__ failed`.

        %s

        With `fork` nothing is pickled, so the code works on Linux up to Python 3.13 and
        breaks on Windows, macOS, and Linux from Python 3.14 on (default `forkserver`).
    ''') % (_PICKLE_WARNING, _EOF_NOTE),
    example="",
    use_instead="",
    fix_safety=_doc('''
        The doctor's patch lifts the lambda to a module-level `def` named from its role
        (`collate_fn` -> `_collate`, a transform `lambda x: x * 2` -> `_scale`, `self.fn`
        -> `_fn`) above the statement that held it; a module-level `name = lambda ...`
        becomes `def name(...)`. Names the lambda read from the function around it become
        keyword-only parameters, bound with `functools.partial` at the same place, so they
        are read when the loader is built rather than when a batch is made. Review the name.
    '''),
    options=_START_METHOD_OPTION,
    references=(
        "vllm-project/guidellm#782",
        "HazyResearch/cartridges#20",
        "pytorch/vision#5801",
        "liznerski/fcdd#2",
        "pytorch/pytorch#167387",
        "pytorch/pytorch#188885",
        "python/cpython#139806",
        "cjrh/deadpool#191",
        "python/cpython#122213",
    ),
    static=True,
    invalid=_examples(
        _module('''
            def main():
                loader = DataLoader(Squares(), batch_size=4, num_workers=2,
                                    collate_fn=lambda batch: batch)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
        _module('''
            def main():
                loader = DataLoader(Squares(), batch_size=4, num_workers=2,
                                    worker_init_fn=lambda worker_id: print(worker_id))
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
        _module('''
            def main():
                loader = DataLoader(Squares(transform=lambda x: x + 1), num_workers=2)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        ''', dataset=_SQUARES_T),
        _module('''
            def main():
                transform = transforms.Compose([
                    transforms.ToTensor(),
                    transforms.Lambda(lambda x: x * 2),
                ])
                loader = DataLoader(Squares(transform=transform), num_workers=2)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        ''', imports="from torchvision import transforms\n", dataset=_SQUARES_T),
        _module('''
            tf = lambda x: x + 1


            def main():
                loader = DataLoader(Squares(transform=tf), num_workers=2)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        ''', dataset=_SQUARES_T),
        _module('''
            class Scaled(Dataset):
                def __init__(self, factor):
                    self.fn = lambda x: x * factor

                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return self.fn(i)


            if __name__ == "__main__":
                loader = DataLoader(Scaled(3), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
        ''', dataset=""),
    ),
    valid=_examples(
        _module('''
            def keep_list(batch):
                return batch


            def main():
                loader = DataLoader(Squares(), batch_size=4, num_workers=2,
                                    collate_fn=keep_list)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
        _module('''
            def main():
                loader = DataLoader(Squares(), batch_size=4, num_workers=0,
                                    collate_fn=lambda batch: batch)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
        _module('''
            def main():
                loader = DataLoader(Squares(transform=lambda x: x + 1), batch_size=4)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        ''', dataset=_SQUARES_T),
        _module('''
            def main():
                loader = DataLoader(Squares(), batch_size=4, num_workers=2)
                thread = threading.Thread(target=lambda: print(len(loader)))
                thread.start()
                thread.join()
                order = sorted(range(8), key=lambda i: -i)
                print(order)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        ''', imports="import threading\n\n"),
        _module('''
            class Doubled(Dataset):
                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    double = transforms.Lambda(lambda x: x * 2)
                    return double(float(i))


            if __name__ == "__main__":
                loader = DataLoader(Doubled(), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
        ''', imports="from torchvision import transforms\n", dataset=""),
        _module('''
            class KeySampler(Sampler):
                def __init__(self, n, key):
                    self.n = n
                    self.key = key

                def __iter__(self):
                    return iter(sorted(range(self.n), key=self.key))

                def __len__(self):
                    return self.n


            if __name__ == "__main__":
                # the sampler stays in the main process: it is never pickled
                sampler = KeySampler(8, key=lambda i: -i)
                loader = DataLoader(Squares(), batch_size=4, sampler=sampler, num_workers=2)
                for batch in loader:
                    print(batch)
        ''', imports="from torch.utils.data import Sampler\n"),
    ),
))


# --- DLW103 ------------------------------------------------------------------------

_add(Rule(
    code="DLW103",
    title="nested function or class reaches a DataLoader worker",
    message=("{kind} '{name}' defined inside {scope}() reaches a worker as {role} and is not "
             "picklable under {method}; define it at module level"),
    fix_title="Move the function or class to module level",
    explanation=_text('''
        Under spawn and forkserver the DataLoader pickles its dataset, collate_fn and
        worker_init_fn into every worker, and functions and classes are pickled by their
        importable name. A function or class defined inside another function only exists
        while that function runs, so its name cannot be imported and starting the workers
        fails with "Can't pickle local object". This covers nested functions, a
        functools.partial of one, bound methods and instances of classes defined in a
        function, and a Dataset subclass defined in a function. Move the definition to the
        module's top level and pass what it closed over as arguments.
    '''),
    what_it_does=_doc('''
        Checks for a function or class defined inside a function body that a `DataLoader`
        with workers sends to its worker processes: a nested `def` passed as `collate_fn`
        or `worker_init_fn`, `functools.partial(nested, ...)`, a bound method or an
        instance of a class defined in a function, or a `Dataset` subclass defined inside a
        function and used as the loader's dataset.
    '''),
    why_bad=_doc('''
        Under `spawn` and `forkserver` the worker `Process` object (dataset, `collate_fn`,
        `worker_init_fn`) is pickled in the parent at `iter(loader)`, and functions and
        classes pickle by qualified name. A name such as `main.<locals>.pad` cannot be
        imported, so the parent raises:

        | Python | Error |
        |---|---|
        | 3.8 to 3.12.4 | `AttributeError: Can't pickle local object 'main.<locals>.pad'` |
        | 3.12.5+, 3.13 | `AttributeError: Can't get local object 'main.<locals>.pad'` |
        | 3.14 | `_pickle.PicklingError: Can't pickle local object <function main.<locals>.pad at 0x...>`, with `when serializing ...` notes naming the path |

        An instance of a class defined in a function gives the same error for the class
        (`Can't pickle local object 'main.<locals>.Squares'`); a bound method pickles its
        instance, so it fails the same way, and `functools.partial` pickles the wrapped
        function by name.

        %s

        %s

        With `fork` nothing is pickled, so the code works on Linux up to Python 3.13 and
        breaks on Windows, macOS, and Linux from Python 3.14 on. Windows users also report
        `PermissionError: [WinError 5] Access is denied` after a few epochs that went away
        once nested functions were removed.
    ''') % (_PICKLE_WARNING, _EOF_NOTE),
    example="",
    use_instead="",
    fix_safety=_doc('''
        The doctor's patch moves the definition, with its decorators and comments, to module
        level just above the function that held it; a function's captured variables become
        keyword-only parameters bound with `functools.partial` where it is used. There is no
        patch for a class that reads the function's variables, a definition that uses
        `nonlocal` or another local definition, or a name already taken at module level.
        The patch needs review: captured values are now read when the partial is made, and
        a moved class changes its qualified name for anything else that pickles it.
    '''),
    options=_START_METHOD_OPTION,
    references=(
        "pyg-team/pytorch_geometric#2440",
        "pyg-team/pytorch_geometric#1126",
        "sanghyun-son/EDSR-PyTorch#291",
        "pytorch/pytorch#49856",
        "python/cpython#139806",
        "python/cpython#122311",
    ),
    static=True,
    invalid=_examples(
        _module('''
            def main():
                def pad(batch):
                    return batch

                loader = DataLoader(Squares(), batch_size=4, num_workers=2, collate_fn=pad)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
        _module('''
            def main(size):
                def pad(batch, size):
                    return batch + [0] * (size - len(batch))

                loader = DataLoader(Squares(), batch_size=4, num_workers=2,
                                    collate_fn=functools.partial(pad, size=size))
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main(4)
        ''', imports="import functools\n\n"),
        _module('''
            def main():
                class Collate:
                    def pad(self, batch):
                        return batch

                loader = DataLoader(Squares(), batch_size=4, num_workers=2,
                                    collate_fn=Collate().pad)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
        _module('''
            def main():
                class Cubes(Dataset):
                    def __len__(self):
                        return 8

                    def __getitem__(self, i):
                        return i ** 3

                loader = DataLoader(Cubes(), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        ''', dataset=""),
        _module('''
            def main(seed):
                def init(worker_id):
                    print(seed + worker_id)

                loader = DataLoader(Squares(), batch_size=4, num_workers=2,
                                    worker_init_fn=init)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main(0)
        '''),
    ),
    valid=_examples(
        _module('''
            def pad(batch):
                return batch


            def main():
                loader = DataLoader(Squares(), batch_size=4, num_workers=2, collate_fn=pad)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
        _module('''
            def main():
                def pad(batch):
                    return batch

                loader = DataLoader(Squares(), batch_size=4, num_workers=0, collate_fn=pad)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
        _module('''
            def pad(batch, size):
                return batch + [0] * (size - len(batch))


            def main(size):
                loader = DataLoader(Squares(), batch_size=4, num_workers=2,
                                    collate_fn=functools.partial(pad, size=size))
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main(4)
        ''', imports="import functools\n\n"),
        _module('''
            class Collate:
                def __init__(self, size):
                    self.size = size

                def __call__(self, batch):
                    return batch[:self.size]


            def main():
                def show(batch):
                    print(batch)

                loader = DataLoader(Squares(), batch_size=4, num_workers=2,
                                    collate_fn=Collate(4))
                for batch in loader:
                    show(batch)


            if __name__ == "__main__":
                main()
        '''),
    ),
))


# --- DLW104 ------------------------------------------------------------------------

_add(Rule(
    code="DLW104",
    title="object defined only in __main__ reaches a DataLoader worker",
    message=("{kind} '{name}' defined {where} reaches a worker as {role}; spawned workers "
             "cannot import it, {fix}"),
    fix_title="Define it at module level above the __main__ guard, or in an importable module",
    explanation=_text('''
        Under spawn and forkserver each worker re-imports the main script under the name
        __mp_main__, so the code inside if __name__ == "__main__": does not run there. A
        class or function defined only inside that block (or in a package's __main__.py run
        with python -m, or in an interactive session) therefore does not exist in the
        worker, and unpickling the dataset or collate_fn fails with "Can't get attribute".
        The worker dies at start and the parent reports that it exited unexpectedly. Define
        the object at module level above the guard, or in a module you import.
    '''),
    what_it_does=_doc('''
        Checks for a class or function defined inside the `if __name__ == "__main__":`
        block, anywhere in a package's `__main__.py`, or at the top level of a Jupyter
        notebook's cell (`doctor check notebook.ipynb`, `nbqa flake8`), that a
        `DataLoader` with workers sends to its worker processes (as the dataset, part of
        it, `collate_fn` or `worker_init_fn`). In a notebook the finding is at the
        definition's name, in the cell to move into a module beside the notebook.
    '''),
    why_bad=_doc('''
        Under `spawn` and `forkserver` the parent pickles the object by reference
        (`__main__.Squares`), and the child must find it again by name. The child re-imports
        a script run by path as `__mp_main__`, which skips the guarded block, and does not
        re-run a package's `__main__.py` (`python -m pkg`), the REPL, `python -c` or a
        notebook at all. The error is raised in the **child**, while it unpickles:

        | How the script runs | Python 3.8 to 3.13 | Python 3.14 |
        |---|---|---|
        | `python train.py` | `AttributeError: Can't get attribute 'Squares' on <module '__mp_main__' from '/path/train.py'>` | `AttributeError: module '__mp_main__' has no attribute 'Squares'` |
        | REPL, `-c`, Jupyter, `python -m pkg` | `AttributeError: Can't get attribute 'Squares' on <module '__main__' (built-in)>` (3.8 to 3.11); `AttributeError: Can't get attribute 'Squares' on <module '__main__' (<class '_frozen_importlib.BuiltinImporter'>)>` (3.12, 3.13) | `AttributeError: module '__main__' has no attribute 'Squares'` |

        The parent sees `RuntimeError: DataLoader worker (pid X) exited unexpectedly with
        exit code 1. Details are lost due to multiprocessing. Rerunning with num_workers=0
        may give better error trace.` chained to `RuntimeError: DataLoader worker (pid(s) X)
        exited unexpectedly` (only the latter on Windows). With a large dataset the parent
        hangs forever in `w.start()` under POSIX spawn, or gets
        `BrokenPipeError: [Errno 32] Broken pipe` under forkserver and on Windows.

        A script fed on stdin (`python - < train.py`) fails in the child with
        `FileNotFoundError: [Errno 2] No such file or directory: '/cwd/<stdin>'`.
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        The doctor's patch moves the definition out of the guard to module level, just above
        it. A definition that reads names bound only inside the guard gets no patch, nor does
        a package's `__main__.py` (the definition belongs in a sibling module that
        `__main__.py` imports: move it there by hand). The patch needs review: decorators
        and class bodies of the moved code now run at import time in every worker.
    '''),
    options=_START_METHOD_OPTION,
    references=(
        "Sleepychord/CogLTX#2",
        "pytorch/pytorch#59451",
        "MagicStack/uvloop#735",
        "https://stackoverflow.com/questions/61860800/running-a-processpoolexecutor-in-ipython",
        "discuss.python.org: \"Multiprocessing fails in __main__.py when using forkserver start method\"",
        "python/cpython#141859",
    ),
    static=True,
    invalid=_examples(
        _dedent('''
            from torch.utils.data import DataLoader, Dataset

            if __name__ == "__main__":
                class Squares(Dataset):
                    def __len__(self):
                        return 8

                    def __getitem__(self, i):
                        return i * i

                loader = DataLoader(Squares(), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            if __name__ == "__main__":
                def pad(batch):
                    return batch

                loader = DataLoader(Squares(), batch_size=4, num_workers=2, collate_fn=pad)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            if __name__ == "__main__":
                def init(worker_id):
                    print("worker", worker_id)

                loader = DataLoader(Squares(), batch_size=4, num_workers=2,
                                    worker_init_fn=init)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            if __name__ == "__main__":
                class AddOne:
                    def __call__(self, x):
                        return x + 1

                loader = DataLoader(Squares(transform=AddOne()), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
        ''', dataset=_SQUARES_T),
    ),
    valid=_examples(
        _module('''
            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            def pad(batch):
                return batch


            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, num_workers=2, collate_fn=pad)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            if __name__ == "__main__":
                def pad(batch):
                    return batch

                loader = DataLoader(Squares(), batch_size=4, num_workers=0, collate_fn=pad)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            if __name__ == "__main__":
                def show(batch):
                    print("batch:", batch)

                loader = DataLoader(Squares(), batch_size=4, num_workers=2)
                for batch in loader:
                    show(batch)
        '''),
        _module('''
            class AddOne:
                def __call__(self, x):
                    return x + 1


            if __name__ == "__main__":
                loader = DataLoader(Squares(transform=AddOne()), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
        ''', dataset=_SQUARES_T),
    ),
))


# --- DLW105 ------------------------------------------------------------------------

_add(Rule(
    code="DLW105",
    title="pin_memory on a host with little RAM",
    message=("pin_memory=True on a host with {ram_gb:.1f} GB of RAM (below {min_ram_gb:g} GB) "
             "locks every prefetched batch in RAM that cannot be swapped; "
             "set pin_memory=False or load fewer batches ahead"),
    fix_title="Set pin_memory=False, or lower num_workers and prefetch_factor",
    explanation=_text('''
        With pin_memory=True every batch is copied into page-locked host memory before it
        goes to the GPU. PyTorch caches that memory and never returns it to the operating
        system, and it cannot be swapped, so num_workers times prefetch_factor times the
        batch size of locked RAM can exhaust a small host. The pin-memory thread or the
        whole process then dies. On this host, turn pin_memory off or lower num_workers,
        prefetch_factor or the batch size.
    '''),
    what_it_does=_doc('''
        Checks for `pin_memory=True` on a `DataLoader` when the host running flake8 has
        less RAM than `--dlw-min-ram-gb` (default 16 GB). The host is read once when flake8
        starts. The rule is host-dependent and therefore off by default.
    '''),
    why_bad=_doc('''
        Pinned (page-locked) host memory is allocated through PyTorch's caching host
        allocator: it is not returned to the OS and cannot be swapped, and large
        `prefetch_factor` x `num_workers` x batch sizes make it grow until the host runs out
        of RAM (pytorch/pytorch#97432, pytorch/pytorch#95823). What the user sees:

        - `RuntimeError: Pin memory thread exited unexpectedly` in the parent when the
          pin-memory thread died;
        - `RuntimeError: Caught RuntimeError in pin memory thread for device 0.`, followed
          by `Original Traceback...` and often a CUDA out-of-memory error;
        - a worker or the main process killed by the out-of-memory killer (see DLW201):
          `RuntimeError: DataLoader worker (pid X) is killed by signal: Killed.`

        On torch 1.7.x `persistent_workers=True` with `pin_memory=True` also crashed the pin
        thread with `ValueError: not enough values to unpack (expected 2, got 0)` (fixed by
        pytorch/pytorch#48543). Without an accelerator the option only warns:
        `UserWarning: 'pin_memory' argument is set as true but no accelerator is found,
        then device pinned memory won't be used.`
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        The doctor's patch makes it `pin_memory=torch.cuda.is_available()`: pinning only
        speeds up copies to a CUDA device, so a host without one stops pinning. The RAM
        threshold is not written into the script (reading the host's RAM portably needs
        psutil), so on a CUDA host with little RAM the fix stays in words: lower
        `prefetch_factor` or the batch size, or pass `False`. Review it for the machine
        that trains.
    '''),
    options=_doc('''
        - `--dlw-min-ram-gb FLOAT` (default 16): hosts with less RAM than this get the
          report.
        - The rule is off by default (flake8 `extend_default_ignore`) and a prefix such as
          `--select DLW` or `extend-select = DLW` does not turn it on; name its code:
          `--extend-select DLW105` (or `extend-select = DLW,DLW105` in config).
    '''),
    references=(
        "pytorch/pytorch#97432",
        "pytorch/pytorch#95823",
        "pytorch/pytorch#48370",
        "pytorch/pytorch#47445",
        "pytorch/pytorch#48543",
        "WongKinYiu/yolov9#533",
        "hearbenchmark/hear-eval-kit#316",
        "cszn/KAIR#127",
    ),
    static=True,
    default_off=True,
    invalid=_examples(
        _module('''
            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, num_workers=2, pin_memory=True)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, pin_memory=True)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            def main():
                use_gpu = torch.cuda.is_available()
                loader = DataLoader(Squares(), batch_size=4, num_workers=2, pin_memory=use_gpu)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        ''', imports="import torch\n"),
        _module('''
            if __name__ == "__main__":
                loader = tud.DataLoader(Squares(), 4, False, None, None, 2, None, True)
                for batch in loader:
                    print(batch)
        ''', imports="import torch.utils.data as tud\n"),
    ),
    valid=_examples(
        _module('''
            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, num_workers=2, pin_memory=False)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, num_workers=2, pin_memory=None)
                for batch in loader:
                    print(batch)
        '''),
        _dedent('''
            class DataLoader:
                """A home-made loader: only torch's DataLoader pins memory."""

                def __init__(self, data, pin_memory=False):
                    self.data = data

                def __iter__(self):
                    return iter(self.data)


            if __name__ == "__main__":
                for item in DataLoader([1, 2, 3], pin_memory=True):
                    print(item)
        '''),
        _module('''
            PIN_MEMORY = False  # this machine has little RAM


            def main():
                loader = DataLoader(Squares(), batch_size=4, num_workers=2, pin_memory=PIN_MEMORY)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
    ),
))


# --- DLW106 ------------------------------------------------------------------------

_add(Rule(
    code="DLW106",
    title="worker-only option given while num_workers is 0",
    message=("{option} is given while num_workers is 0{source}, and DataLoader raises "
             "ValueError; pass num_workers > 0 or drop {option}"),
    fix_title="Drop the option, or make it conditional on num_workers > 0",
    explanation=_text('''
        persistent_workers and prefetch_factor only mean something when the DataLoader
        has worker processes. With num_workers=0 (or no num_workers at all) the DataLoader
        refuses them and raises ValueError when it is built. This often happens when
        num_workers is set to 0 to debug a worker crash. Drop the option, or write it as
        persistent_workers=num_workers > 0 and prefetch_factor=2 if num_workers else None.
    '''),
    what_it_does=_doc('''
        Checks for a `DataLoader` call that passes `persistent_workers=True` or a
        `prefetch_factor` other than `None` while `num_workers` is a literal `0` or absent.
        An option already conditioned on the worker count (`persistent_workers=workers > 0`)
        is left alone.
    '''),
    why_bad=_doc('''
        The DataLoader constructor rejects the combination (torch 2.x):

        - `ValueError: persistent_workers option needs num_workers > 0`
        - `ValueError: prefetch_factor option could only be specified in
          multiprocessing.let num_workers > 0 to enable multiprocessing, otherwise set
          prefetch_factor to None.` (the missing space after "multiprocessing." is in
          torch's source)

        In torch 1.x `prefetch_factor` defaulted to 2 and the check had no "otherwise set
        prefetch_factor to None." clause. The error typically appears when a user sets
        `num_workers=0` as the usual workaround for another worker crash
        (torchmd/torchmd-net#323).
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        The doctor's patch drops the option when `num_workers` is absent or a literal 0, and
        otherwise makes it conditional: `persistent_workers=<num_workers> > 0`,
        `prefetch_factor=<value> if <num_workers> > 0 else None`. The patch needs review:
        if `num_workers=0` was meant as a temporary workaround, the right fix may be to
        restore the workers instead.
    '''),
    options="None.",
    references=("torchmd/torchmd-net#323",),
    static=True,
    invalid=_examples(
        _module('''
            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, persistent_workers=True)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, num_workers=0, prefetch_factor=4)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            WORKERS = 0  # set to 0 while debugging a worker crash


            def main():
                loader = DataLoader(Squares(), batch_size=4, num_workers=WORKERS,
                                    persistent_workers=True)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
        _module('''
            if __name__ == "__main__":
                loader = tud.DataLoader(Squares(), 4, False, None, None, 0, prefetch_factor=2)
                for batch in loader:
                    print(batch)
        ''', imports="import torch.utils.data as tud\n"),
    ),
    valid=_examples(
        _module('''
            def make_loader(workers):
                return DataLoader(Squares(), batch_size=4, num_workers=workers,
                                  persistent_workers=workers > 0)


            if __name__ == "__main__":
                for batch in make_loader(0):
                    print(batch)
        '''),
        _module('''
            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, num_workers=2,
                                    persistent_workers=True, prefetch_factor=4)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            def make_loader(workers):
                return DataLoader(Squares(), batch_size=4, num_workers=workers,
                                  prefetch_factor=2 if workers else None)


            if __name__ == "__main__":
                for batch in make_loader(0):
                    print(batch)
        '''),
        _module('''
            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, num_workers=0, prefetch_factor=None,
                                    persistent_workers=False)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            def main(**loader_options):
                loader = DataLoader(Squares(), batch_size=4, persistent_workers=True,
                                    **loader_options)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main(num_workers=2)
        '''),
    ),
))


# --- DLW107 ------------------------------------------------------------------------

_add(Rule(
    code="DLW107",
    title="CUDA used in DataLoader worker code",
    message=("CUDA is used in worker-side code ({where}); return CPU tensors and move each "
             "batch to the GPU in the training loop"),
    fix_title="Return CPU tensors; move batches to the GPU in the main process",
    explanation=_text('''
        Code that runs in the workers (the dataset's __getitem__ or __iter__, a transform,
        collate_fn, worker_init_fn) touches CUDA. Under fork, a worker cannot initialise
        CUDA once the parent has used it and fails with "Cannot re-initialize CUDA in forked
        subprocess"; under spawn and forkserver every worker creates its own CUDA context,
        costing hundreds of megabytes of GPU memory each. Return CPU tensors from the
        dataset and move each batch to the GPU in the training loop, with pin_memory=True
        and non_blocking=True if transfers matter.
    '''),
    what_it_does=_doc('''
        Checks worker-side code of a `DataLoader` with workers, namely the dataset class's
        `__getitem__`/`__iter__` (and what they call), its transforms, `collate_fn` and
        `worker_init_fn`, for CUDA use: `.cuda()`, `.to("cuda")`, `.to(device)` where
        `device` is (or may be, one branch of a conditional) `"cuda"` or
        `torch.device("cuda")`, `device="cuda"` on a torch factory, and the `torch.cuda`
        calls that need a CUDA context (`is_available()` and `device_count()` do not, and
        are not reported). Moving each batch to the GPU in the training loop is the right
        place and is never reported.
    '''),
    why_bad=_doc('''
        The CUDA runtime is not fork-safe. Under `fork` (the Linux default up to Python
        3.13), after the parent has initialised CUDA, the worker's first CUDA call raises,
        and the loader re-raises it in the parent:

        ```text
        RuntimeError: Caught RuntimeError in DataLoader worker process 0.
        Original Traceback (most recent call last):
          ...
        RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method
        ```

        Under `spawn` and `forkserver` the worker may initialise CUDA itself, but each
        worker then holds its own CUDA context (hundreds of MB of GPU memory per worker),
        and CUDA tensors sent between processes go through fragile CUDA IPC. On Windows,
        where CUDA IPC is not supported, sharing them fails with
        `THCudaCheck FAIL file=torch\\csrc\\generic\\StorageSharing.cpp line=252 error=63 :
        OS call failed or operation not supported on this OS`. The PyTorch docs: "It is
        generally not recommended to return CUDA tensors in multi-process loading".
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        The doctor's patch takes the device off the flagged call (`x.cuda()` becomes `x`,
        `x.to("cuda")` becomes `x`, `device="cuda"` leaves a tensor factory), so the
        workers return CPU tensors, and starts each loop over that loader in the same file
        with `if torch.cuda.is_available(): batch = batch.to("cuda", non_blocking=True)`
        (the script's own device where it wrote one as a literal). It gives no patch for a
        `torch.cuda` call that needs a context, for a loop that unpacks the batch
        (`for x, y in loader`: which parts belong on the GPU is the author's call), or
        where no loop over the loader is in the file. By hand: return CPU tensors from
        the dataset and `collate_fn`, move each batch with `batch.to(device,
        non_blocking=True)` in the training loop (with `pin_memory=True` on the loader).
        If GPU work in the workers cannot be avoided, use `multiprocessing_context="spawn"`
        and few workers, or `num_workers=0`.
    '''),
    options="None.",
    references=(
        "pytorch/pytorch#40403",
        "pytorch/pytorch#77159",
        "pytorch/pytorch#2971",
        "pytorch/pytorch#24292",
        "https://pytorch.org/docs/stable/notes/multiprocessing.html",
    ),
    static=True,
    invalid=_examples(
        _dedent('''
            import torch
            from torch.utils.data import DataLoader, Dataset


            class OnGpu(Dataset):
                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return torch.full((3,), float(i)).cuda()


            if __name__ == "__main__":
                loader = DataLoader(OnGpu(), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            def to_gpu(batch):
                return torch.tensor(batch).to("cuda")


            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, num_workers=2, collate_fn=to_gpu)
                for batch in loader:
                    print(batch)
        ''', imports="import torch\n"),
        _dedent('''
            import torch
            from torch.utils.data import DataLoader, Dataset


            class Images(Dataset):
                def __init__(self):
                    self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return torch.full((3,), float(i)).to(self.device)


            def main():
                loader = DataLoader(Images(), batch_size=4, num_workers=4)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
        _dedent('''
            import torch
            from torch.utils.data import DataLoader, Dataset


            def noise(shape):
                return torch.randn(shape, device="cuda")


            class Noisy(Dataset):
                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return noise((3,)) + i


            if __name__ == "__main__":
                loader = DataLoader(Noisy(), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            class ToGpu:
                def __call__(self, x):
                    return torch.tensor(x).cuda()


            if __name__ == "__main__":
                loader = DataLoader(Squares(transform=ToGpu()), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
        ''', imports="import torch\n", dataset=_SQUARES_T),
        _dedent('''
            import torch
            from torch.utils.data import DataLoader, Dataset


            class Images(Dataset):
                def __init__(self, n, device="cpu"):
                    self.n = n
                    self.device = device

                def __len__(self):
                    return self.n

                def __getitem__(self, i):
                    return torch.full((3,), float(i)).to(self.device)


            def main():
                device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
                for batch in DataLoader(Images(8, device=device), batch_size=4, num_workers=2):
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
    ),
    valid=_examples(
        _dedent('''
            import torch
            from torch.utils.data import DataLoader, Dataset


            class OnCpu(Dataset):
                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return torch.full((3,), float(i))


            if __name__ == "__main__":
                loader = DataLoader(OnCpu(), batch_size=4, num_workers=2)
                for batch in loader:
                    batch = batch.to("cuda", non_blocking=True)
                    print(batch)
        '''),
        _dedent('''
            import torch
            from torch.utils.data import DataLoader, Dataset


            class OnGpu(Dataset):
                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return torch.full((3,), float(i)).cuda()


            if __name__ == "__main__":
                loader = DataLoader(OnGpu(), batch_size=4, num_workers=0)
                for batch in loader:
                    print(batch)
        '''),
        _dedent('''
            import torch
            from torch.utils.data import DataLoader, Dataset


            class Table(Dataset):
                def __init__(self):
                    self.data = torch.arange(8.0)

                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return self.data[i]

                def to_gpu(self):
                    self.data = self.data.cuda()


            if __name__ == "__main__":
                table = Table()
                loader = DataLoader(table, batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
                table.to_gpu()
        '''),
        _dedent('''
            import torch
            from torch.utils.data import DataLoader, Dataset


            class Floats(Dataset):
                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    x = torch.full((3,), float(i))
                    if torch.cuda.is_available():
                        x = x.to("cpu")
                    return x


            def main():
                device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
                for batch in DataLoader(Floats(), batch_size=4, num_workers=2, pin_memory=True):
                    print(batch.to(device, non_blocking=True))


            if __name__ == "__main__":
                main()
        '''),
        _dedent('''
            import torch
            from torch.utils.data import DataLoader, Dataset


            class Images(Dataset):
                def __init__(self, n, device="cpu"):
                    self.n = n
                    self.device = device

                def __len__(self):
                    return self.n

                def __getitem__(self, i):
                    return torch.full((3,), float(i)).to(self.device)


            def main():
                device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
                for batch in DataLoader(Images(8), batch_size=4, num_workers=2):
                    print(batch.to(device, non_blocking=True))


            if __name__ == "__main__":
                main()
        '''),
    ),
))


# --- DLW108 ------------------------------------------------------------------------

_add(Rule(
    code="DLW108",
    title="unpicklable or fork-unsafe handle on the dataset",
    message=("dataset attribute 'self.{attr}' holds {handle}, which cannot be pickled into "
             "workers or shared across fork; open it lazily in each worker "
             "(in __getitem__ or worker_init_fn)"),
    fix_title="Open the handle lazily in each worker instead of in __init__",
    explanation=_text('''
        The dataset keeps an open handle (a file, an h5py, lmdb, sqlite or zip handle, a
        socket, a lock, a generator, a module object or a torch.Generator) that it created
        in __init__. Under spawn and forkserver the dataset is pickled into every worker and
        such handles cannot be pickled, so starting the workers fails; under fork they are
        shared between processes, which corrupts reads for libraries such as HDF5 and lmdb.
        Store only the path in __init__ and open the handle on first use in each worker, or
        drop it in __getstate__ and reopen it in __setstate__.
    '''),
    what_it_does=_doc('''
        Checks the `__init__` of a dataset class used by a `DataLoader` with workers for
        attributes bound to a handle: `open(...)`, `h5py.File`, `lmdb.open`,
        `sqlite3.connect`, `zipfile.ZipFile`/`tarfile.open`, `socket.socket`,
        `threading.Lock`/`RLock`/`local`, a generator expression or generator call, a module
        object, or a `torch.Generator`. A handle opened lazily (in `__getitem__`, or in
        `worker_init_fn` through `get_worker_info().dataset`) or dropped in
        `__getstate__` is left alone.
    '''),
    why_bad=_doc('''
        Under `spawn` and `forkserver` the dataset is pickled in the parent at
        `iter(loader)`, and handles refuse to be pickled:

        | Object | Python 3.8 to 3.11 | Python 3.12, 3.13 |
        |---|---|---|
        | open text file | `TypeError: cannot pickle '_io.TextIOWrapper' object` | `TypeError: cannot pickle 'TextIOWrapper' instances` |
        | open binary file | `TypeError: cannot pickle '_io.BufferedReader' object` | `TypeError: cannot pickle 'BufferedReader' instances` (3.13) |
        | `threading.Lock()` | `TypeError: cannot pickle '_thread.lock' object` | same |
        | `threading.RLock()` | `TypeError: cannot pickle '_thread.RLock' object` | same |
        | `threading.local()` | `TypeError: cannot pickle '_thread._local' object` | same |
        | sqlite3 connection | `TypeError: cannot pickle 'sqlite3.Connection' object` | same |
        | socket | `TypeError: cannot pickle 'socket' object` | same |
        | generator | `TypeError: cannot pickle 'generator' object` | same |
        | module object (`self.np = numpy`) | `TypeError: cannot pickle 'module' object` | same |
        | h5py File or Dataset | `TypeError: h5py objects cannot be pickled` | same |
        | lmdb Environment | `TypeError: cannot pickle 'Environment' object` (older: `TypeError: can't pickle Environment objects`) | same |

        Older Pythons spelled them `TypeError: can't pickle _thread.lock objects` and
        `TypeError: can't pickle module objects`. A `torch.Generator` on the dataset pickles,
        but the child fails with `RuntimeError: unable to resize file <filename not
        specified> to the right size: Invalid argument (22)` and the parent reports
        `exited unexpectedly with exit code 1` (pytorch/pytorch#146828).

        %s

        Under `fork` nothing is pickled, but the handle is then shared by every worker:
        "h5py doesn't allow reading from multiple processes" (pytorch/pytorch#11929), and
        lmdb environments opened before fork are unsafe.
    ''') % _EOF_NOTE,
    example="",
    use_instead="",
    fix_safety=_doc('''
        The doctor's patch adds a `__getstate__` that leaves the handle out of what is
        pickled. A handle used only in `__init__` needs nothing more; a lock is remade in
        `__setstate__`; any other handle used elsewhere is opened on first use (`__init__`
        keeps `None`, each method that uses it opens it when it is still `None`), which
        needs the opening expression to read only module names, `self` attributes and
        `__init__` parameters kept on `self`. A handle that `__init__` keeps using after
        opening it (a database it fills) gets no patch: reopened in a worker it would not
        hold the same data. The patch needs review: errors such as a missing file move into
        the workers, and a reopened seeded generator starts every worker in the same state.
    '''),
    options=_doc('''
        - `--dlw-start-method {spawn,forkserver,fork}` (default `spawn`): with `fork`
          nothing is pickled, so only the handles that are unsafe to share across fork
          (h5py, lmdb, sqlite) remain worth reporting.
    '''),
    references=(
        "pytorch/pytorch#11929",
        "pytorch/pytorch#51836",
        "pytorch/pytorch#146828",
        "baudm/parseq#6",
        "Lyken17/Efficient-PyTorch#13",
        "galilai-group/stable-worldmodel#194",
        "liznerski/fcdd#2",
        "jfzhang95/pytorch-deeplab-xception#220",
    ),
    static=True,
    invalid=_examples(
        _dedent('''
            from torch.utils.data import DataLoader, Dataset


            class Lines(Dataset):
                def __init__(self, path):
                    self.file = open(path)
                    self.offsets = [0, 6, 12]

                def __len__(self):
                    return len(self.offsets)

                def __getitem__(self, i):
                    self.file.seek(self.offsets[i])
                    return self.file.readline()


            if __name__ == "__main__":
                loader = DataLoader(Lines("data.txt"), batch_size=2, num_workers=2)
                for batch in loader:
                    print(batch)
        '''),
        _dedent('''
            import h5py
            from torch.utils.data import DataLoader, Dataset


            class Frames(Dataset):
                def __init__(self, path):
                    self.images = h5py.File(path, "r")["images"]

                def __len__(self):
                    return len(self.images)

                def __getitem__(self, i):
                    return self.images[i]


            if __name__ == "__main__":
                loader = DataLoader(Frames("frames.h5"), batch_size=8, num_workers=4)
                for batch in loader:
                    print(batch.shape)
        '''),
        _dedent('''
            import sqlite3
            from torch.utils.data import DataLoader, Dataset


            class Rows(Dataset):
                def __init__(self, path):
                    self.db = sqlite3.connect(path)

                def __len__(self):
                    return self.db.execute("select count(*) from t").fetchone()[0]

                def __getitem__(self, i):
                    return self.db.execute("select x from t where id = ?", (i,)).fetchone()[0]


            if __name__ == "__main__":
                loader = DataLoader(Rows("rows.db"), batch_size=2, num_workers=2)
                for batch in loader:
                    print(batch)
        '''),
        _dedent('''
            import threading

            from torch.utils.data import DataLoader, Dataset


            class Cached(Dataset):
                def __init__(self):
                    self.lock = threading.Lock()
                    self.cache = {}

                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    with self.lock:
                        return self.cache.setdefault(i, i * i)


            def main():
                for batch in DataLoader(Cached(), batch_size=4, num_workers=2):
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
        _dedent('''
            import numpy as np
            import torch
            from torch.utils.data import DataLoader, Dataset


            class Noisy(Dataset):
                def __init__(self):
                    self.np = np
                    self.gen = torch.Generator().manual_seed(0)
                    self.stream = (i * i for i in range(8))

                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return torch.rand(1, generator=self.gen) + self.np.float32(i)


            if __name__ == "__main__":
                for batch in DataLoader(Noisy(), batch_size=4, num_workers=2):
                    print(batch)
        '''),
    ),
    valid=_examples(
        _dedent('''
            from torch.utils.data import DataLoader, Dataset


            class Lines(Dataset):
                def __init__(self, path):
                    self.path = path
                    self.file = None
                    self.offsets = [0, 6, 12]

                def __len__(self):
                    return len(self.offsets)

                def __getitem__(self, i):
                    if self.file is None:
                        self.file = open(self.path)
                    self.file.seek(self.offsets[i])
                    return self.file.readline()


            if __name__ == "__main__":
                loader = DataLoader(Lines("data.txt"), batch_size=2, num_workers=2)
                for batch in loader:
                    print(batch)
        '''),
        _dedent('''
            from torch.utils.data import DataLoader, Dataset


            class Lines(Dataset):
                def __init__(self, path):
                    self.path = path
                    self.file = open(path)

                def __getstate__(self):
                    state = self.__dict__.copy()
                    state["file"] = None
                    return state

                def __setstate__(self, state):
                    self.__dict__.update(state)
                    self.file = open(self.path)

                def __len__(self):
                    return 3

                def __getitem__(self, i):
                    return self.file.readline()


            if __name__ == "__main__":
                for batch in DataLoader(Lines("data.txt"), batch_size=2, num_workers=2):
                    print(batch)
        '''),
        _dedent('''
            from torch.utils.data import DataLoader, Dataset


            class Lines(Dataset):
                def __init__(self, path):
                    with open(path) as handle:
                        self.lines = handle.readlines()

                def __len__(self):
                    return len(self.lines)

                def __getitem__(self, i):
                    return self.lines[i]


            if __name__ == "__main__":
                for batch in DataLoader(Lines("data.txt"), batch_size=2, num_workers=2):
                    print(batch)
        '''),
        _dedent('''
            import sqlite3
            from torch.utils.data import DataLoader, Dataset, get_worker_info


            class Rows(Dataset):
                def __init__(self, path):
                    self.path = path
                    self.db = None

                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return self.db.execute("select x from t where id = ?", (i,)).fetchone()[0]


            def open_db(worker_id):
                dataset = get_worker_info().dataset
                dataset.db = sqlite3.connect(dataset.path)


            if __name__ == "__main__":
                loader = DataLoader(Rows("rows.db"), batch_size=2, num_workers=2,
                                    worker_init_fn=open_db)
                for batch in loader:
                    print(batch)
        '''),
        _dedent('''
            from torch.utils.data import DataLoader, Dataset


            class Lines(Dataset):
                def __init__(self, path):
                    self.file = open(path)

                def __len__(self):
                    return 3

                def __getitem__(self, i):
                    return self.file.readline()


            if __name__ == "__main__":
                for batch in DataLoader(Lines("data.txt"), batch_size=2):
                    print(batch)
        '''),
    ),
))


# --- DLW109 ------------------------------------------------------------------------

_add(Rule(
    code="DLW109",
    title="IterableDataset not sharded across workers",
    message=("IterableDataset '{name}' ignores get_worker_info() and runs with several "
             "workers, so every worker yields every sample; shard __iter__ by "
             "get_worker_info().id and .num_workers"),
    fix_title="Shard __iter__ with torch.utils.data.get_worker_info()",
    explanation=_text('''
        Each DataLoader worker gets its own copy of an IterableDataset and runs its
        __iter__ from the start. Unless __iter__ uses torch.utils.data.get_worker_info() to
        take only its share, every worker yields the whole stream, so each sample appears
        once per worker and an epoch is num_workers times too long. Nothing crashes; the
        training data is silently duplicated. Shard inside __iter__ with the worker's id and
        num_workers (and by rank as well under distributed training).
    '''),
    what_it_does=_doc('''
        Checks for an `IterableDataset` subclass used by a `DataLoader` whose `num_workers`
        may be above 1 when nothing in its `__iter__` chain (the methods and module
        functions it calls) uses `torch.utils.data.get_worker_info()` or a known sharding
        helper (`split_dataset_by_node`, webdataset's `split_by_worker`, torchdata's
        `sharding_filter`). A loader with a `worker_init_fn` is left alone: it may
        configure each replica, as the PyTorch docs show.
    '''),
    why_bad=_doc('''
        Nothing is raised. With two workers and no sharding, an `__iter__` returning
        `range(4)` yields `[0, 0, 1, 1, 2, 2, 3, 3]`. When the dataset defines `__len__`,
        torch may warn once more samples arrive than `len(loader)` promised:

        `UserWarning: Length of IterableDataset <...> was reported to be 4(when accessing
        len(dataloader)), but 5 samples have been fetched. For multiprocessing data-loading,
        this could be caused by not properly configuring the IterableDataset replica at each
        worker. Please see https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset
        for examples.`

        `drop_last=True` also drops the last partial batch of each worker, not just one.
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        The doctor's patch keeps the class's `__iter__` as `_all_samples` and adds an
        `__iter__` that deals the stream out by position: each worker yields the samples
        whose index modulo `num_workers` is its `id`, so every sample comes once over all
        workers, whatever the source. Each worker still reads the whole stream and skips
        the others' share; where reading is the cost (files, shards, a database cursor, a
        network feed), split the source itself instead. By hand: in `__iter__`, call
        `info = torch.utils.data.get_worker_info()` and, when it is not `None`, yield only
        items `info.id`, `info.id + info.num_workers`, ... (for example
        `range(start + info.id, end, info.num_workers)`), or split the work in
        `worker_init_fn` through `info.dataset`.
    '''),
    options="None.",
    references=(
        "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset",
    ),
    static=True,
    invalid=_examples(
        _dedent('''
            from torch.utils.data import DataLoader, IterableDataset


            class Numbers(IterableDataset):
                def __iter__(self):
                    return iter(range(8))


            if __name__ == "__main__":
                loader = DataLoader(Numbers(), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
        '''),
        _dedent('''
            import argparse

            from torch.utils.data import DataLoader, IterableDataset


            class Lines(IterableDataset):
                def __init__(self, path):
                    self.path = path

                def __iter__(self):
                    with open(self.path) as handle:
                        for line in handle:
                            yield line.strip()


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--workers", type=int, default=4)
                args = parser.parse_args()
                for batch in DataLoader(Lines("data.txt"), batch_size=2, num_workers=args.workers):
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
        _dedent('''
            from torch.utils.data import DataLoader, IterableDataset


            class Shards(IterableDataset):
                def __init__(self, shards):
                    self.shards = shards

                def __iter__(self):
                    for shard in self.shards:
                        yield from self._read(shard)

                def _read(self, shard):
                    return range(shard * 4, shard * 4 + 4)


            if __name__ == "__main__":
                dataset = Shards([0, 1, 2])
                for batch in DataLoader(dataset, batch_size=4, num_workers=3):
                    print(batch)
        '''),
        _dedent('''
            import torch.utils.data as tud


            class Stream(tud.IterableDataset):
                def __iter__(self):
                    return (i * i for i in range(8))


            if __name__ == "__main__":
                for batch in tud.DataLoader(Stream(), batch_size=4, num_workers=4):
                    print(batch)
        '''),
    ),
    valid=_examples(
        _dedent('''
            from torch.utils.data import DataLoader, IterableDataset, get_worker_info


            class Numbers(IterableDataset):
                def __iter__(self):
                    info = get_worker_info()
                    if info is None:
                        return iter(range(8))
                    return iter(range(info.id, 8, info.num_workers))


            if __name__ == "__main__":
                loader = DataLoader(Numbers(), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
        '''),
        _dedent('''
            import torch
            from torch.utils.data import DataLoader, IterableDataset


            class Shards(IterableDataset):
                def __init__(self, shards):
                    self.shards = shards

                def __iter__(self):
                    for shard in self._mine():
                        yield from range(shard * 4, shard * 4 + 4)

                def _mine(self):
                    info = torch.utils.data.get_worker_info()
                    if info is None:
                        return self.shards
                    return self.shards[info.id::info.num_workers]


            if __name__ == "__main__":
                for batch in DataLoader(Shards([0, 1, 2]), batch_size=4, num_workers=3):
                    print(batch)
        '''),
        _dedent('''
            from torch.utils.data import DataLoader, IterableDataset


            class Numbers(IterableDataset):
                def __iter__(self):
                    return iter(range(8))


            if __name__ == "__main__":
                for batch in DataLoader(Numbers(), batch_size=4, num_workers=1):
                    print(batch)
                for batch in DataLoader(Numbers(), batch_size=4):
                    print(batch)
        '''),
        _dedent('''
            import math

            from torch.utils.data import DataLoader, IterableDataset, get_worker_info


            class Range(IterableDataset):
                def __init__(self, start, end):
                    self.start, self.end = start, end

                def __iter__(self):
                    return iter(range(self.start, self.end))


            def split_range(worker_id):
                info = get_worker_info()
                dataset = info.dataset
                per_worker = math.ceil((dataset.end - dataset.start) / info.num_workers)
                dataset.start = dataset.start + worker_id * per_worker
                dataset.end = min(dataset.start + per_worker, dataset.end)


            if __name__ == "__main__":
                loader = DataLoader(Range(0, 8), batch_size=4, num_workers=2,
                                    worker_init_fn=split_range)
                for batch in loader:
                    print(batch)
        '''),
    ),
))


# --- DLW110 ------------------------------------------------------------------------

_add(Rule(
    code="DLW110",
    title="more DataLoader workers than usable CPUs",
    message=("num_workers={num_workers} is above the limit of {max_workers} workers "
             "(this host can use {cpus} CPUs); use at most {max_workers}, or derive the "
             "count from os.sched_getaffinity(0)"),
    fix_title="Lower num_workers to the usable CPU count",
    explanation=_text('''
        The DataLoader starts more worker processes than the host has CPUs available to
        this process. The workers then compete for the same cores, each holds its own copy
        of the dataset's memory, and loading gets slower rather than faster; in small
        containers and CI machines it often ends in freezes or the out-of-memory killer.
        Use at most as many workers as usable CPUs, computed at run time.
    '''),
    what_it_does=_doc('''
        Checks for a literal `num_workers` larger than `--dlw-max-workers` (default: the
        usable CPU count of the host running flake8, read once at start-up). A non-literal
        count (`args.workers`, `os.cpu_count()`) is not reported. The rule is
        host-dependent and therefore off by default.
    '''),
    why_bad=_doc('''
        PyTorch's `DataLoader.check_worker_number_rationality()` warns at construction and
        at every multi-worker `iter()` (8 workers on a 2-CPU machine):

        `UserWarning: This DataLoader will create 8 worker processes in total. Our suggested
        max number of worker in current system is 2, which is smaller than what this
        DataLoader is going to create. Please be aware that excessive worker creation might
        get DataLoader running slow or even freeze, lower the worker number to avoid
        potential slowness/freeze if necessary.`

        Where `os.sched_getaffinity` is missing (macOS, Windows) the suggestion reads
        ``...is 8 (`cpuset` is not taken into account), which is smaller than...``; when
        the CPU count is unknown, ``... DataLoader is not able to compute a suggested max
        number of worker in current system. ...``. The warning is not an error, but it goes
        with freezes and OOM kills (DLW201) in small containers and CI.
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        The right count depends on the machine that trains, not the one that runs flake8,
        so the count is computed at run time: the doctor's patch turns a literal
        `num_workers=64` into `num_workers=min(64, os.cpu_count() or 1)` (portable;
        `len(os.sched_getaffinity(0))` also respects a CPU mask on Linux). A count that is
        not a literal (an argument, a config value) gets no patch: cap it where it is
        set, or take it from the command line.
    '''),
    options=_doc('''
        - `--dlw-max-workers INT` (default: the usable CPU count of the host running
          flake8): a literal `num_workers` above this is reported.
        - The rule is off by default (flake8 `extend_default_ignore`) and a prefix such as
          `--select DLW` or `extend-select = DLW` does not turn it on; name its code:
          `--extend-select DLW110` (or `extend-select = DLW,DLW110` in config).
    '''),
    references=(
        "torch/utils/data/dataloader.py: DataLoader.check_worker_number_rationality()",
    ),
    static=True,
    default_off=True,
    invalid=_examples(
        _module('''
            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, num_workers=512)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            if __name__ == "__main__":
                loader = DataLoader(Squares(), 4, True, None, None, 16)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            NUM_WORKERS = 32


            def main():
                loader = DataLoader(Squares(), batch_size=4, num_workers=NUM_WORKERS)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
        _module('''
            if __name__ == "__main__":
                loader = tud.DataLoader(Squares(), batch_size=4, num_workers=64,
                                        persistent_workers=True)
                for batch in loader:
                    print(batch)
        ''', imports="import torch.utils.data as tud\n"),
    ),
    valid=_examples(
        _module('''
            if __name__ == "__main__":
                workers = min(8, os.cpu_count() or 1)
                loader = DataLoader(Squares(), batch_size=4, num_workers=workers)
                for batch in loader:
                    print(batch)
        ''', imports="import os\n\n"),
        _module('''
            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
        '''),
        _module('''
            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--workers", type=int, default=16)
                args = parser.parse_args()
                loader = DataLoader(Squares(), batch_size=4, num_workers=args.workers)
                for batch in loader:
                    print(batch)


            if __name__ == "__main__":
                main()
        ''', imports="import argparse\n\n"),
        _module('''
            if __name__ == "__main__":
                loader = DataLoader(Squares(), batch_size=4, num_workers=len(os.sched_getaffinity(0)))
                for batch in loader:
                    print(batch)
        ''', imports="import os\n\n"),
    ),
))


# --- DLW111 ------------------------------------------------------------------------

_add(Rule(
    code="DLW111",
    title="random generator on the dataset copied into every worker",
    message=("dataset attribute 'self.{attr}' holds a random generator ({factory}) that every "
             "worker copies in the same state; create or reseed it per worker from "
             "get_worker_info().seed"),
    fix_title="Create or reseed the generator per worker in worker_init_fn",
    explanation=_text('''
        The dataset stores its own random generator, such as np.random.default_rng or
        random.Random, created in __init__. Every worker receives a copy in exactly the same
        state, so all workers draw the same "random" numbers, and without persistent
        workers they start from that state again every epoch. PyTorch reseeds torch, random
        and the global numpy generator per worker, but not generator objects kept on the
        dataset. Create or reseed the generator in worker_init_fn from
        get_worker_info().seed.
    '''),
    what_it_does=_doc('''
        Checks the `__init__` of a dataset class used by a `DataLoader` with workers for an
        attribute bound to a random generator object: `np.random.default_rng(...)`,
        `np.random.RandomState(...)`, `np.random.Generator(...)`, `random.Random(...)`.
        A generator created in `worker_init_fn` or lazily in the worker is left alone.
    '''),
    why_bad=_doc('''
        Nothing is raised: the augmentations are silently identical across workers. Each
        worker is seeded with `base_seed + worker_id` for torch and `random`, and since
        PyTorch 1.9 (pytorch/pytorch#56488, #56797) also for the global `np.random`, but a
        generator object kept on the dataset is copied with its state: measured on torch
        2.14.1, `self.g.integers()` gave 850624 in both workers and in both epochs.

        A seeded `torch.Generator` kept on the dataset does not even start under `spawn` or
        `forkserver`: the child fails with `RuntimeError: unable to resize file <filename
        not specified> to the right size: Invalid argument (22)` (pytorch/pytorch#146828,
        reported as DLW108).

        The PyTorch FAQ entry "My data loader workers return identical random numbers"
        describes the same effect for libraries other than torch.
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        The doctor's patch adds a module-level `_seed_worker(worker_id)` after the dataset
        class that rebuilds `get_worker_info().dataset.<attr>` with the same factory from
        `get_worker_info().seed`, and passes `worker_init_fn=_seed_worker` to each loader
        built on that class. A loader that already has a `worker_init_fn` gets no patch
        (merge the two by hand). The patch needs review: it changes the random stream, so
        results that relied on the fixed seed will differ.
    '''),
    options="None.",
    references=(
        "TorchDSP/torchsig#343",
        "pytorch/pytorch#56488",
        "pytorch/pytorch#56797",
        "pytorch/pytorch#5059",
        "pytorch/pytorch#41329",
        "braindecode/braindecode#317",
        "https://pytorch.org/docs/stable/notes/randomness.html",
    ),
    static=True,
    invalid=_examples(
        _dedent('''
            import numpy as np
            from torch.utils.data import DataLoader, Dataset


            class Noisy(Dataset):
                def __init__(self):
                    self.rng = np.random.default_rng(0)

                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return i + self.rng.normal()


            if __name__ == "__main__":
                loader = DataLoader(Noisy(), batch_size=4, num_workers=2)
                for batch in loader:
                    print(batch)
        '''),
        _dedent('''
            import random

            from torch.utils.data import DataLoader, Dataset


            class Flips(Dataset):
                def __init__(self, seed):
                    self.random = random.Random(seed)

                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return -i if self.random.random() < 0.5 else i


            def main():
                for batch in DataLoader(Flips(seed=1), batch_size=4, num_workers=2):
                    print(batch)


            if __name__ == "__main__":
                main()
        '''),
        _dedent('''
            import numpy as np
            from torch.utils.data import DataLoader, Dataset


            class Crops(Dataset):
                def __init__(self):
                    self.state = np.random.RandomState()

                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return self._crop(i)

                def _crop(self, i):
                    return i + self.state.randint(0, 4)


            if __name__ == "__main__":
                for batch in DataLoader(Crops(), batch_size=4, num_workers=4):
                    print(batch)
        '''),
        _dedent('''
            import numpy as np
            import torch
            from torch.utils.data import DataLoader, Dataset


            class Noisy(Dataset):
                def __init__(self):
                    self.rng = np.random.default_rng(0)

                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return i + self.rng.normal()


            def seed_worker(worker_id):
                np.random.seed(torch.initial_seed() % 2**32)


            if __name__ == "__main__":
                loader = DataLoader(Noisy(), batch_size=4, num_workers=2, worker_init_fn=seed_worker)
                for batch in loader:
                    print(batch)
        '''),
    ),
    valid=_examples(
        _dedent('''
            import numpy as np
            from torch.utils.data import DataLoader, Dataset, get_worker_info


            class Noisy(Dataset):
                def __init__(self):
                    self.rng = None

                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return i + self.rng.normal()


            def seed_worker(worker_id):
                info = get_worker_info()
                info.dataset.rng = np.random.default_rng(info.seed)


            if __name__ == "__main__":
                loader = DataLoader(Noisy(), batch_size=4, num_workers=2, worker_init_fn=seed_worker)
                for batch in loader:
                    print(batch)
        '''),
        _dedent('''
            import numpy as np
            from torch.utils.data import DataLoader, Dataset


            class Noisy(Dataset):
                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return i + np.random.normal()


            if __name__ == "__main__":
                for batch in DataLoader(Noisy(), batch_size=4, num_workers=2):
                    print(batch)
        '''),
        _dedent('''
            import numpy as np
            from torch.utils.data import DataLoader, Dataset, get_worker_info


            class Noisy(Dataset):
                def __init__(self):
                    self.rng = np.random.default_rng(0)

                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    info = get_worker_info()
                    if info is not None and not getattr(self, "reseeded", False):
                        self.rng = np.random.default_rng(info.seed)
                        self.reseeded = True
                    return i + self.rng.normal()


            if __name__ == "__main__":
                for batch in DataLoader(Noisy(), batch_size=4, num_workers=2):
                    print(batch)
        '''),
        _dedent('''
            import random

            from torch.utils.data import DataLoader, Dataset


            class Shuffled(Dataset):
                def __init__(self, seed):
                    self.rng = random.Random(seed)
                    self.order = list(range(8))
                    self.rng.shuffle(self.order)

                def __len__(self):
                    return len(self.order)

                def __getitem__(self, i):
                    return self.order[i]


            if __name__ == "__main__":
                for batch in DataLoader(Shuffled(0), batch_size=4, num_workers=2):
                    print(batch)
        '''),
        _dedent('''
            import numpy as np
            from torch.utils.data import DataLoader, Dataset


            class Noisy(Dataset):
                def __init__(self):
                    self.rng = np.random.default_rng(0)

                def __len__(self):
                    return 8

                def __getitem__(self, i):
                    return i + self.rng.normal()


            if __name__ == "__main__":
                for batch in DataLoader(Noisy(), batch_size=4):
                    print(batch)
        '''),
    ),
))


# --- runtime-only causes (2xx) -------------------------------------------------------

_RUNTIME_ONLY = "None. This cause is runtime-only: `python -m doctor` reports it, flake8 does not."

# --- DLW201 ------------------------------------------------------------------------

_add(Rule(
    code="DLW201",
    title="worker killed by the out-of-memory killer",
    message=("a DataLoader worker was killed by SIGKILL, most likely the out-of-memory killer; "
             "use fewer workers, a smaller batch or prefetch_factor, or compact dataset storage"),
    fix_title="Lower num_workers, prefetch_factor or batch size; store metadata in arrays",
    explanation=_text('''
        A DataLoader worker was killed with SIGKILL, which on Linux almost always means the
        out-of-memory killer ended it because the host or container ran out of RAM. Memory
        grows with every worker: each holds batches in flight and, under fork, the Python
        objects of the dataset it touches get copied page by page as reference counts
        change. Use fewer workers, a smaller batch or prefetch_factor, keep dataset
        metadata in numpy or pyarrow arrays instead of lists of Python objects, or raise the
        memory limit.
    '''),
    what_it_does=_doc('''
        The doctor reports this when a worker's exit signal is SIGKILL, with each worker's
        peak resident memory and the host's free memory as evidence; `doctor explain`
        recognises the message below in a saved log.
    '''),
    why_bad=_doc('''
        The worker prints nothing; the parent raises
        `RuntimeError: DataLoader worker (pid X) is killed by signal: Killed.` (with a
        trailing space), and the traceback usually ends with the chained generic
        `RuntimeError: DataLoader worker (pid(s) X) exited unexpectedly`. `dmesg` shows
        `Out of memory: Killed process X (python)`. If the main process is the one killed,
        the shell prints `Killed` (exit status 137) and there is no Python traceback.

        The PyTorch docs warn that loader workers "will consume the same amount of CPU
        memory as the parent process for all Python objects in the parent process which
        are accessed from the worker processes", so overall memory use is about
        `number of workers * size of parent process` (pytorch/pytorch#13246). On Windows the
        same exhaustion usually shows up as WinError 1455 instead (DLW207).
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        The doctor's patch lowers `num_workers` to `floor(available / peak RSS per worker)`,
        from the run's measurements, with the arithmetic in a comment above the loader
        (`min(<expr>, N)` when the value is not a literal). When that is not below the
        current number, memory per worker does not explain the kill and there is no patch.
        The patch is unsafe to apply blindly: it trades loading speed for memory, and the
        numbers come from the host the doctor ran on, so review them for the machine that
        trains.
    '''),
    options=_RUNTIME_ONLY,
    references=(
        "pytorch/pytorch#8976",
        "pytorch/pytorch#13246",
        "pytorch/pytorch#5902",
        "pytorch/pytorch#20433",
        "open-mmlab/mmrotate#501",
    ),
    static=False,
    invalid=_examples(_dedent('''
        from torch.utils.data import DataLoader, Dataset


        class Paths(Dataset):
            def __init__(self):
                self.items = [{"path": "img_%d.jpg" % i, "label": i % 10}
                              for i in range(20_000_000)]

            def __len__(self):
                return len(self.items)

            def __getitem__(self, i):
                return self.items[i]["label"]


        if __name__ == "__main__":
            loader = DataLoader(Paths(), batch_size=1024, num_workers=16, prefetch_factor=8)
            for batch in loader:
                pass
    ''')),
    valid=_examples(_dedent('''
        import numpy as np
        from torch.utils.data import DataLoader, Dataset


        class Paths(Dataset):
            def __init__(self):
                self.labels = np.arange(20_000_000, dtype=np.int64) % 10

            def __len__(self):
                return len(self.labels)

            def __getitem__(self, i):
                return int(self.labels[i])


        if __name__ == "__main__":
            loader = DataLoader(Paths(), batch_size=256, num_workers=4)
            for batch in loader:
                pass
    ''')),
))


# --- DLW202 ------------------------------------------------------------------------

_add(Rule(
    code="DLW202",
    title="shared memory (/dev/shm) exhausted",
    message=("the workers ran out of shared memory in /dev/shm; raise its size "
             "(docker --shm-size=8g or --ipc=host) or use fewer workers or smaller batches"),
    fix_title="Raise the /dev/shm size, or lower num_workers or the batch size",
    explanation=_text('''
        Workers hand their batches to the main process through shared-memory files in
        /dev/shm, and that space ran out. Docker gives containers only 64 MB of /dev/shm by
        default, which a few batches of images fill quickly. Raise the size (docker run
        --shm-size=8g or --ipc=host; in Kubernetes an emptyDir with medium Memory mounted at
        /dev/shm), or use fewer workers or smaller batches.
    '''),
    what_it_does=_doc('''
        The doctor reports this when a worker dies of SIGBUS or reports a shared-memory
        allocation failure, with the size and free space of `/dev/shm` as evidence;
        `doctor explain` recognises the messages below in a saved log.
    '''),
    why_bad=_doc('''
        Before torch switched to `posix_fallocate` (pytorch/pytorch#161910), shared-memory
        files were sparse, and the first write past the limit raised SIGBUS. The worker
        prints `ERROR: Unexpected bus error encountered in worker. This might be caused by
        insufficient shared memory (shm).` (followed by a NUL byte, so `grep` may call the
        log binary) and the parent raises `RuntimeError: DataLoader worker (pid X) is killed
        by signal: Bus error. It is possible that dataloader's workers are out of shared
        memory. Please try to raise your shared memory limit.`, chained to the generic
        `exited unexpectedly`. Older releases said
        `RuntimeError: unable to write to file </torch_1394_2747491098>`.

        Newer torch (seen on 2.14.1) fails cleanly instead:
        `RuntimeError: Caught RuntimeError in DataLoader worker process 0.` ...
        `RuntimeError: unable to allocate shared memory(shm) for file
        </torch_15149_1374766741_0>: No space left on device (28)`. With a custom
        `collate_fn` that returns plain tensors, the same error is printed by the worker's
        queue feeder thread and the parent hangs (DLW206).
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        No safe automatic patch exists: the limit belongs to the container or host, not to
        the code. Fix it outside the code: `docker run --shm-size=8g` (or `--ipc=host`), a
        Kubernetes `emptyDir` volume with `medium: Memory` mounted at `/dev/shm`; or lower
        `num_workers`, `prefetch_factor` or the batch size; `num_workers=0` avoids shared
        memory entirely.
    '''),
    options=_RUNTIME_ONLY,
    references=(
        "nianticlabs/simplerecon#3",
        "microsoft/RepPoints#18",
        "ultralytics/yolov3#1151",
        "open-mmlab/mmdetection#6993",
        "METR/vivaria#502",
        "pytorch/pytorch#45728",
        "pytorch/pytorch#161910",
        "pangeo-data/pangeo-docker-images#258",
    ),
    static=False,
    invalid=_examples(_dedent('''
        # run in a container with Docker's default 64 MB /dev/shm
        import torch
        from torch.utils.data import DataLoader, Dataset


        class Images(Dataset):
            def __len__(self):
                return 10_000

            def __getitem__(self, i):
                return torch.zeros(3, 512, 512)


        if __name__ == "__main__":
            loader = DataLoader(Images(), batch_size=64, num_workers=8)
            for batch in loader:
                pass
    ''')),
    valid=_examples(_dedent('''
        # run with: docker run --shm-size=8g ...
        import torch
        from torch.utils.data import DataLoader, Dataset


        class Images(Dataset):
            def __len__(self):
                return 10_000

            def __getitem__(self, i):
                return torch.zeros(3, 512, 512)


        if __name__ == "__main__":
            loader = DataLoader(Images(), batch_size=16, num_workers=2)
            for batch in loader:
                pass
    ''')),
))


# --- DLW203 ------------------------------------------------------------------------

_add(Rule(
    code="DLW203",
    title="native crash in a DataLoader worker",
    message=("a DataLoader worker crashed in native code (SIGSEGV or SIGABRT); limit native "
             "threads in workers (cv2.setNumThreads(0), OMP_NUM_THREADS=1) or use spawn"),
    fix_title="Limit native threads in workers, or start workers with spawn",
    explanation=_text('''
        A DataLoader worker died from a native crash, a segmentation fault or an abort,
        inside C or C++ code rather than in Python. The usual causes are native libraries
        that are not fork-safe (OpenCV or OpenMP thread pools created before the fork),
        corrupted files handed to a C decoder, or a stack overflow from deep recursion in
        __getitem__. Set cv2.setNumThreads(0) or OMP_NUM_THREADS=1, import heavy native
        libraries inside the worker, or use the spawn start method; run with num_workers=0
        and faulthandler enabled to see the failing frame.
    '''),
    what_it_does=_doc('''
        The doctor reports this when a worker exits with SIGSEGV, SIGABRT or SIGFPE, with
        the worker's native and Python stack (from `faulthandler`) as evidence;
        `doctor explain` recognises the messages below in a saved log.
    '''),
    why_bad=_doc('''
        The worker's signal handler prints one line (followed by a NUL byte) and re-raises:
        `ERROR: Unexpected segmentation fault encountered in worker.` or
        `ERROR: Unexpected floating-point exception encountered in worker.` The parent
        raises `RuntimeError: DataLoader worker (pid X) is killed by signal: Segmentation
        fault.`, `... is killed by signal: Aborted.` or `... is killed by signal: Floating
        point exception.` (each with a trailing space), chained to the generic
        `exited unexpectedly`. SIGABRT has no worker-side line, but the worker often prints
        first: `terminate called after throwing an instance of 'c10::Error'`,
        `Fatal Python error: Cannot recover from stack overflow.`, or glibc's
        `malloc(): memory corruption` / `double free`.

        Known triggers: OpenCV with threads ("It's definitely cv2. It is known to be not
        nice with multiprocessing", pytorch/pytorch#4969), `torch.set_num_threads(N)` before
        forking in torch 1.8.0/1.8.1 (pytorch/pytorch#54752), GDAL, corrupted input files,
        recursive retries in `__getitem__`.
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        No safe automatic patch exists: the crashing library and the fix depend on the
        stack. Fix it by hand: call `cv2.setNumThreads(0)` (and optionally
        `cv2.ocl.setUseOpenCL(False)`) in `worker_init_fn`, set `OMP_NUM_THREADS=1`, import
        the native library inside the worker, use `multiprocessing_context="spawn"`, or
        upgrade torch; debug with `num_workers=0` and `PYTHONFAULTHANDLER=1`.
    '''),
    options=_RUNTIME_ONLY,
    references=(
        "pytorch/pytorch#54752",
        "pytorch/pytorch#56615",
        "pytorch/pytorch#4969",
        "facebookresearch/SlowFast#443",
        "pytorch/pytorch#149762",
        "TongkunGuan/CCD#11",
        "zalandoresearch/pytorch-ts#134",
        "SCLBD/DeepfakeBench#117",
    ),
    static=False,
    invalid=_examples(_dedent('''
        import cv2
        from torch.utils.data import DataLoader, Dataset

        cv2.setNumThreads(8)


        class Photos(Dataset):
            def __init__(self, paths):
                self.paths = paths

            def __len__(self):
                return len(self.paths)

            def __getitem__(self, i):
                return cv2.resize(cv2.imread(self.paths[i]), (224, 224))


        if __name__ == "__main__":
            loader = DataLoader(Photos(["a.jpg", "b.jpg"]), batch_size=2, num_workers=2)
            for batch in loader:
                print(batch.shape)
    ''')),
    valid=_examples(_dedent('''
        import cv2
        from torch.utils.data import DataLoader, Dataset


        class Photos(Dataset):
            def __init__(self, paths):
                self.paths = paths

            def __len__(self):
                return len(self.paths)

            def __getitem__(self, i):
                return cv2.resize(cv2.imread(self.paths[i]), (224, 224))


        def no_cv_threads(worker_id):
            cv2.setNumThreads(0)


        if __name__ == "__main__":
            loader = DataLoader(Photos(["a.jpg", "b.jpg"]), batch_size=2, num_workers=2,
                                worker_init_fn=no_cv_threads)
            for batch in loader:
                print(batch.shape)
    ''')),
))


# --- DLW204 ------------------------------------------------------------------------

_add(Rule(
    code="DLW204",
    title="file descriptors exhausted",
    message=("the process ran out of file descriptors passing batches from the workers; "
             "call torch.multiprocessing.set_sharing_strategy('file_system') or raise ulimit -n"),
    fix_title="Use the file_system sharing strategy, or raise the open-files limit",
    explanation=_text('''
        On Linux, PyTorch's default file_descriptor sharing strategy keeps one open file
        descriptor for every shared tensor a worker sends back, for as long as the tensor
        lives. Keeping many batches alive (for example appending them to a list) uses up the
        open-files limit, and the workers can no longer pass data to the main process. Call
        torch.multiprocessing.set_sharing_strategy('file_system') at the start of the
        program, raise the limit (ulimit -n), or keep copies instead of the batches
        themselves.
    '''),
    what_it_does=_doc('''
        The doctor reports this from the messages below, with the process's
        `RLIMIT_NOFILE` and the current sharing strategy as evidence; `doctor explain`
        recognises them in a saved log.
    '''),
    why_bad=_doc('''
        Current torch detects the condition and raises, `from None`:

        ```text
        RuntimeError: Too many open files. Communication with the workers is no longer possible. Please increase the limit using `ulimit -n` in the shell or change the sharing strategy by calling `torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code
        ```

        This hides the underlying `RuntimeError: received 0 items of ancdata` (raised at
        `multiprocessing/reduction.py` `recvfds` via `rebuild_storage_fd`), which still
        appears when torch cannot run its check and in older releases (the check came with
        pytorch/pytorch#34768). Related messages: `OSError: [Errno 24] Too many open files`
        and `RuntimeError: unable to open shared memory object </torch_...> in read-write
        mode`. macOS uses the `file_system` strategy by default and does not see it;
        clusters with `ulimit -n 1024` see it often.
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        The doctor's patch inserts `torch.multiprocessing.set_sharing_strategy("file_system")`
        right after the script's imports (with `import torch.multiprocessing` when torch is
        not imported). The patch needs review: with `file_system`, shared-memory files can
        leak when a process is killed (torch_shm_manager cleans up most of them), and code
        that keeps every batch alive may be the real problem.
    '''),
    options=_RUNTIME_ONLY,
    references=(
        "pytorch/pytorch#973",
        "pytorch/pytorch#41465",
        "pytorch/pytorch#34768",
        "pytorch/pytorch#14768",
        "Project-MONAI/MONAI#701",
        "https://pytorch.org/docs/stable/multiprocessing.html#sharing-strategies",
    ),
    static=False,
    invalid=_examples(_module('''
        if __name__ == "__main__":
            kept = []
            for batch in DataLoader(Squares(), batch_size=1, num_workers=2):
                kept.append(batch)
    ''')),
    valid=_examples(_module('''
        torch.multiprocessing.set_sharing_strategy("file_system")

        if __name__ == "__main__":
            kept = []
            for batch in DataLoader(Squares(), batch_size=1, num_workers=2):
                kept.append(batch.clone())
    ''', imports="import torch.multiprocessing\n")),
))


# --- DLW205 ------------------------------------------------------------------------

_add(Rule(
    code="DLW205",
    title="exception raised in DataLoader worker code",
    message=("an exception was raised in worker code (dataset, transform, collate_fn or "
             "worker_init_fn); fix the user frame at the end of the Original Traceback"),
    fix_title="Fix the frame that raised, shown last in the Original Traceback",
    explanation=_text('''
        An ordinary Python exception was raised inside a worker, in the dataset's
        __getitem__ or __iter__, a transform, collate_fn or worker_init_fn, and the
        DataLoader re-raised it in the main process. The cause is a bug in that code or a
        bad sample, not the worker machinery, and the worker number says nothing about it.
        Read the "Original Traceback" part: its last frames are the user code that failed.
        Re-running with num_workers=0 gives a direct traceback and a usable debugger.
    '''),
    what_it_does=_doc('''
        The doctor reports this when a worker's exception reaches the parent, and points at
        the user frame that raised it; `doctor explain` recognises the format below in a
        saved log.
    '''),
    why_bad=_doc('''
        The worker's exception is wrapped and re-raised in the parent as the same type
        (`RuntimeError` when the type cannot be rebuilt from one string), with the format
        `Caught {type} in DataLoader worker process {id}.` plus the original traceback:

        ```text
        ValueError: Caught ValueError in DataLoader worker process 1.
        Original Traceback (most recent call last):
          File ".../torch/utils/data/_utils/worker.py", line ..., in _worker_loop
            data = fetcher.fetch(index)
          ...
        ValueError: bad sample 3
        ```

        Newer torch has a thread-worker variant, `in DataLoader worker thread {id}`. Common
        originals: `RuntimeError: stack expects each tensor to be equal size, but got
        [3, 4] at entry 0 and [3, 5] at entry 1` (variable-size samples with the default
        collate) and `TypeError: default_collate: batch must contain tensors, numpy arrays,
        numbers, dicts or lists; found <class 'NoneType'>` (`__getitem__` returned `None`),
        besides `KeyError`, `FileNotFoundError` and `PIL.UnidentifiedImageError`.
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        No safe automatic patch exists: the fix is in the user's own data code. Fix it by
        hand at the frame the doctor names; for variable-size samples write a `collate_fn`
        that pads or returns lists, and filter out samples that come back as `None`.
    '''),
    options=_RUNTIME_ONLY,
    references=(
        "torch/_utils.py: ExceptionWrapper",
        "pytorch/pytorch#40403",
        "Anirudh257/strm#38",
        "eriklindernoren/PyTorch-YOLOv3#518",
    ),
    static=False,
    invalid=_examples(_dedent('''
        import torch
        from torch.utils.data import DataLoader, Dataset


        class Ragged(Dataset):
            def __len__(self):
                return 8

            def __getitem__(self, i):
                return torch.zeros(3, 4 + i % 2)


        if __name__ == "__main__":
            for batch in DataLoader(Ragged(), batch_size=2, num_workers=2):
                print(batch.shape)
    ''')),
    valid=_examples(_dedent('''
        import torch
        from torch.nn.utils.rnn import pad_sequence
        from torch.utils.data import DataLoader, Dataset


        class Ragged(Dataset):
            def __len__(self):
                return 8

            def __getitem__(self, i):
                return torch.zeros(4 + i % 2, 3)


        def pad(batch):
            return pad_sequence(batch, batch_first=True)


        if __name__ == "__main__":
            for batch in DataLoader(Ragged(), batch_size=2, num_workers=2, collate_fn=pad):
                print(batch.shape)
    ''')),
))


# --- DLW206 ------------------------------------------------------------------------

_add(Rule(
    code="DLW206",
    title="DataLoader worker hangs",
    message=("a DataLoader worker stopped making progress (timeout or deadlock); see the stuck "
             "worker's stack, and set timeout= so a hang becomes an error"),
    fix_title="Find what the stuck worker waits on; set timeout= on the DataLoader",
    explanation=_text('''
        The training loop stopped waiting for a batch that never came. A worker is blocked:
        on slow or dead storage or network I/O, on a lock inherited through fork from a
        thread pool in the parent (OpenMP, OpenCV, tokenizers, logging), or because a sample
        could not be sent back and the parent waits forever. The stuck worker's stack shows
        which. Set timeout= on the DataLoader so a hang turns into an error, and use spawn or
        forkserver if the stack shows a lock from a library's thread pool.
    '''),
    what_it_does=_doc('''
        The doctor reports this when its `--timeout` expires or the loader raises its own
        timeout, with every worker's stack (from `faulthandler`) as evidence; `doctor
        explain` recognises the messages below in a saved log.
    '''),
    why_bad=_doc('''
        With `timeout=0` (the default) nothing is printed: the program just freezes. With
        `timeout>0` the parent raises `RuntimeError: DataLoader timed out after {N} seconds`
        (for example `RuntimeError: DataLoader timed out after 1 seconds`).

        Hints that may precede the hang:

        - under `fork` on Python 3.12+, `DeprecationWarning: This process (pid=307138) is
          multi-threaded, use of fork() may lead to deadlocks in the child.`
          (pytorch/pytorch#138957);
        - `huggingface/tokenizers: The current process just got forked, after parallelism
          has already been used. Disabling parallelism to avoid deadlocks...`;
        - a sample that cannot be pickled on its way back
          (`TypeError: cannot pickle '_thread.lock' object` printed from the worker's
          queue feeder thread, pytorch/pytorch#142884);
        - under POSIX spawn, a child that died at start while the parent writes a large
          dataset into the pipe (python/cpython#118981): the parent hangs in `w.start()`.
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        No safe automatic patch exists: what to change depends on what the worker waits
        for. Fix it by hand: give I/O calls their own timeouts, set `timeout=` on the
        DataLoader, use `multiprocessing_context="spawn"` (or `cv2.setNumThreads(0)`,
        `OMP_NUM_THREADS=1`, `TOKENIZERS_PARALLELISM=false`) when the stack shows a
        library's lock, and return only tensors, arrays and plain data from `__getitem__`.
    '''),
    options=_RUNTIME_ONLY,
    references=(
        "pytorch/pytorch#33296",
        "pytorch/pytorch#68643",
        "pytorch/pytorch#138957",
        "pytorch/pytorch#45198",
        "pytorch/pytorch#1355",
        "pytorch/pytorch#142884",
        "python/cpython#118981",
        "huggingface/tokenizers#187",
    ),
    static=False,
    invalid=_examples(_dedent('''
        import urllib.request

        from torch.utils.data import DataLoader, Dataset


        class Remote(Dataset):
            def __init__(self, urls):
                self.urls = urls

            def __len__(self):
                return len(self.urls)

            def __getitem__(self, i):
                with urllib.request.urlopen(self.urls[i]) as response:
                    return len(response.read())


        if __name__ == "__main__":
            loader = DataLoader(Remote(["http://example.invalid/a"]), num_workers=2)
            for batch in loader:
                print(batch)
    ''')),
    valid=_examples(_dedent('''
        import urllib.request

        from torch.utils.data import DataLoader, Dataset


        class Remote(Dataset):
            def __init__(self, urls):
                self.urls = urls

            def __len__(self):
                return len(self.urls)

            def __getitem__(self, i):
                with urllib.request.urlopen(self.urls[i], timeout=10) as response:
                    return len(response.read())


        if __name__ == "__main__":
            loader = DataLoader(Remote(["http://example.invalid/a"]), num_workers=2, timeout=60)
            for batch in loader:
                print(batch)
    ''')),
))


# --- DLW207 ------------------------------------------------------------------------

_add(Rule(
    code="DLW207",
    title="Windows paging file too small (WinError 1455)",
    message=("a worker could not load torch's DLLs because the Windows commit limit was "
             "reached (WinError 1455); use fewer workers or enlarge the paging file"),
    fix_title="Lower num_workers, or enlarge the Windows paging file",
    explanation=_text('''
        On Windows every DataLoader worker is a fresh process that imports torch again and
        maps its large CUDA libraries. Windows reserves memory for their writable sections
        against RAM plus the paging file instead of overcommitting, so a few workers can
        reach the commit limit and the next worker fails while importing torch. Use fewer
        workers, or let Windows manage the paging file size (or set a larger one) and close
        other memory-hungry programs.
    '''),
    what_it_does=_doc('''
        The doctor reports this from the error below in a worker's output, with an
        estimate of the commit charge per worker; `doctor explain` recognises it in a saved
        log.
    '''),
    why_bad=_doc('''
        The child fails while importing torch (`spawn_main` -> `prepare` ->
        `_fixup_main_from_path` -> `import torch`):

        ```text
        OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "...\\torch\\lib\\<dll>" or one of its dependencies.
        ```

        The DLL is for example `caffe2_detectron_ops_gpu.dll`, `cudnn_cnn_infer64_8.dll`,
        `cudnn_adv_infer64_8.dll` or `shm.dll`; localized Windows prints e.g.
        `OSError: [WinError 1455] 页面文件太小，无法完成操作。`. The parent then reports the generic
        `RuntimeError: DataLoader worker (pid(s) ...) exited unexpectedly` or a
        `BrokenPipeError: [Errno 32] Broken pipe`. A related Windows message is
        `Couldn't open shared file mapping: <torch_14808_1591070686>, error code: <1455>`.

        The CUDA DLLs "have very large sections of data in them that aren't really used, but
        space is reserved for them in memory anyways... hundreds of megabytes to a couple
        gigabytes, per process" (ultralytics/yolov3#1643).
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        No safe automatic patch exists: the limit is a Windows setting. Fix it by hand:
        lower `num_workers`; set the paging file to "System managed size" or a larger
        custom size; close other applications; `pin_memory=False` was reported to help in
        some cases.
    '''),
    options=_RUNTIME_ONLY,
    references=(
        "ultralytics/yolov3#1643",
        "ultralytics/ultralytics#776",
        "pytorch/pytorch#59904",
        "WongKinYiu/yolov7#1036",
        "cszn/KAIR#127",
    ),
    static=False,
    invalid=_examples(_module('''
        # Windows, CUDA build of torch, 16 GB of RAM, a small paging file
        if __name__ == "__main__":
            for batch in DataLoader(Squares(), batch_size=4, num_workers=16):
                print(batch)
    ''')),
    valid=_examples(_module('''
        # Windows: keep the worker count small, or enlarge the paging file
        if __name__ == "__main__":
            for batch in DataLoader(Squares(), batch_size=4, num_workers=2):
                print(batch)
    ''')),
))

# --- DLW208 ------------------------------------------------------------------------

_add(Rule(
    code="DLW208",
    title="the run failed, and no DataLoader worker cause explains it",
    message=("the script failed, but no DataLoader worker cause explains it; read the "
             "evidence: the exit status, the signal and the last error printed"),
    fix_title="Read the evidence: the failure lies outside the DataLoader workers",
    explanation=_text('''
        The script ended with a failure, but none of the DataLoader worker causes the doctor
        knows fits what it saw: no worker died, no pickling or bootstrapping error was
        printed. The evidence lists what was seen instead: the exit status or the signal
        that ended the main process, and the last error it printed. A main process killed
        by SIGKILL is most often the out-of-memory killer (or the script or a job
        scheduler killing it); a SIGSEGV or SIGABRT is a native crash in the main process.
    '''),
    what_it_does=_doc('''
        The doctor reports this when a run crashed (a non-zero exit status, or a signal)
        and no other cause in this catalog matched the evidence. It is the doctor's way of
        saying "this failed, and here is what was seen", so that an unexplained crash is
        never reported as a success (exit status 1, not 0).
    '''),
    why_bad=_doc('''
        The run failed; the doctor could not tie the failure to a DataLoader worker. Typical
        evidence: `exit status 137 (SIGKILL)` with no traceback, or an exception raised by
        the training loop itself, such as `ValueError: ...` in the main process.
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        No patch: the cause is outside what the doctor knows. Fix it from the evidence; if
        the main process was killed by SIGKILL, check the host's memory (`dmesg`, the job
        scheduler's log).
    '''),
    options=_RUNTIME_ONLY,
    references=(
        "[Python `subprocess`: a negative `returncode` -N means the child was ended by "
        "signal N](https://docs.python.org/3/library/subprocess.html#subprocess.Popen.returncode)",
        "[Linux kernel docs: out of memory handling]"
        "(https://www.kernel.org/doc/gorman/html/understand/understand016.html)",
    ),
    static=False,
    invalid=_examples(_module('''
        import os
        import signal

        if __name__ == "__main__":
            for batch in DataLoader(Squares(), batch_size=4, num_workers=2):
                os.kill(os.getpid(), signal.SIGKILL)  # or the OOM killer, on the main process
    ''')),
    valid=_examples(_module('''
        if __name__ == "__main__":
            for batch in DataLoader(Squares(), batch_size=4, num_workers=2):
                print(batch)
    ''')),
))

# --- DLW209 ------------------------------------------------------------------------

_add(Rule(
    code="DLW209",
    title="dataset too large to copy into every spawned worker",
    message=("every spawned worker receives its own pickled copy of the dataset, and the "
             "copies exhaust memory or pass pickle's 4 GiB limit; keep the data in a file "
             "that each worker opens lazily (memory-mapped), or use fewer workers"),
    fix_title="Keep large data in a file each worker opens lazily, or use fewer workers",
    explanation=_text('''
        Under spawn and forkserver (Windows, macOS, Python 3.14 on Linux) the DataLoader
        pickles the dataset object and sends one copy to every worker it starts, so a
        dataset that holds its samples in memory is serialised N times, held N + 1 times,
        and each worker starts only after its copy arrived. With a few hundred MB per copy
        the workers' memory alone can exhaust the host, and on Python before 3.8 a copy
        over 4 GiB cannot be pickled at all. Keep the samples in a file (a .npy opened with
        mmap_mode="r", an HDF5 or LMDB file, one file per sample) and let each worker open
        it lazily on first use; the dataset then pickles as a path of a few bytes.
    '''),
    what_it_does=_doc('''
        The doctor measures what each spawned worker receives (the dataset, `collate_fn`
        and `worker_init_fn`, pickled as spawn pickles them, with the time it took). It
        reports this cause when a worker died of memory (SIGKILL or `MemoryError`) without
        growing while it ran, and its copy of the dataset is a large share of its memory;
        or when pickling the worker's arguments failed for their size. `doctor explain`
        recognises the errors below in a saved log.
    '''),
    why_bad=_doc('''
        On Python 3.7 and older (protocol 3), the parent fails while starting the workers:

        ```text
          File "C:\\...\\multiprocessing\\popen_spawn_win32.py", line 65, in __init__
            reduction.dump(process_obj, to_child)
          File "C:\\...\\multiprocessing\\reduction.py", line 60, in dump
            ForkingPickler(file, protocol).dump(obj)
        OverflowError: cannot serialize a bytes object larger than 4 GiB
        ```

        and the half-started child then prints `EOFError: Ran out of input`. Newer Pythons
        say `serializing a bytes object larger than 4 GiB requires pickle protocol 4 or
        higher` when protocol 3 is asked for. On Python 3.8 and later the copy succeeds and
        the memory runs out instead: workers are killed by the out-of-memory killer
        (`DataLoader worker (pid X) is killed by signal: Killed.`), or the parent raises
        `MemoryError` in `reduction.dump`. A large in-memory dataset also makes every epoch
        with non-persistent workers start slowly, since each worker waits for its copy.
        fairseq's maintainers describe it as "an artifact of PyTorch's DataLoader, which
        causes large numpy arrays to be pickled" (facebookresearch/fairseq#2166).
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        No automatic patch: where the data should live (a memory-mapped array, a file per
        sample, a database) depends on the data. The change is the lazy-open pattern of
        DLW108: keep the file's path in `__init__`, open or `np.load(path, mmap_mode="r")`
        on first use in `__getitem__`, and drop the opened object in `__getstate__` so it is
        never pickled. Fewer workers, or `persistent_workers=True` so the copies are made
        once rather than every epoch, reduce the cost without removing it.
    '''),
    options=_RUNTIME_ONLY,
    references=(
        "facebookresearch/fairseq#2166",
        "lshiwjx/2s-AGCN#55",
        "AllenInstitute/deepinterpolation#80",
        "[Python docs: pickle protocol 4 adds support for very large objects]"
        "(https://docs.python.org/3/library/pickle.html#data-stream-format)",
    ),
    static=False,
    invalid=_examples(_dedent('''
        import numpy as np
        from torch.utils.data import DataLoader, Dataset


        class Frames(Dataset):
            def __init__(self, path):
                self.frames = np.load(path)  # 6 GB, copied into every worker

            def __len__(self):
                return len(self.frames)

            def __getitem__(self, i):
                return self.frames[i]


        if __name__ == "__main__":
            for batch in DataLoader(Frames("frames.npy"), batch_size=64, num_workers=8):
                pass
    ''')),
    valid=_examples(_dedent('''
        import numpy as np
        from torch.utils.data import DataLoader, Dataset


        class Frames(Dataset):
            def __init__(self, path):
                self.path = path  # a few bytes to pickle
                self.frames = None
                self.length = len(np.load(path, mmap_mode="r"))

            def __len__(self):
                return self.length

            def __getitem__(self, i):
                if self.frames is None:  # opened once in each worker
                    self.frames = np.load(self.path, mmap_mode="r")
                return np.array(self.frames[i])

            def __getstate__(self):
                return dict(self.__dict__, frames=None)


        if __name__ == "__main__":
            for batch in DataLoader(Frames("frames.npy"), batch_size=64, num_workers=8):
                pass
    ''')),
))

# --- DLW210 ------------------------------------------------------------------------

_add(Rule(
    code="DLW210",
    title="forked workers copy the dataset's Python objects as they read them",
    message=("under fork each worker copies the pages of every Python object of the dataset "
             "it reads (reference counts are writes), so its memory grows with the batches; "
             "keep the samples' metadata in numpy or Arrow arrays instead of lists and dicts"),
    fix_title="Store the dataset's metadata in numpy or Arrow arrays, not lists of objects",
    explanation=_text('''
        With the fork start method a worker starts as a copy of the parent that shares its
        memory until a page is written. Reading a Python object writes it: the reference
        count in its header changes, so the page that holds it is copied into the worker.
        A dataset that keeps its file names, labels or annotations in lists and dicts of
        Python objects is therefore copied into every worker bit by bit as the workers read
        it, and each worker's memory climbs with the batches until the host runs out. It is
        not a leak: the growth stops at the size of what was read, once per worker.
        Numpy and Arrow arrays hold their values in one buffer with one reference count, so
        reading them copies nothing.
    '''),
    what_it_does=_doc('''
        The doctor reports this when the workers were forked (the script's own start method
        under `--compare`, or `--start-method fork`), a worker's memory rose steadily with
        the batches (the forecast), and the dataset holds lists, dicts, sets or tuples of
        100,000 items or more, named in the evidence.
    '''),
    why_bad=_doc('''
        Nothing is printed until the out-of-memory killer ends a worker:
        `RuntimeError: DataLoader worker (pid X) is killed by signal: Killed.` Before
        that, each worker's RSS in `top` rises epoch after epoch towards the size of the
        dataset's objects; with persistent workers and many of them the total passes the
        host's memory. This is the copy-on-read growth discussed at length in
        pytorch/pytorch#13246, where the PyTorch docs' advice to keep dataset metadata in
        numpy arrays comes from.
    '''),
    example="",
    use_instead="",
    fix_safety=_doc('''
        No automatic patch: the change is to how the dataset stores its data. Keep numbers
        in numpy arrays, strings in one numpy byte array with offsets (or a pyarrow array),
        and build the Python object a sample needs in `__getitem__`. Under spawn or
        forkserver each worker gets its own pickled copy instead (see DLW209), which does
        not grow.
    '''),
    options=_RUNTIME_ONLY,
    references=(
        "pytorch/pytorch#13246",
        "[Demystify RAM usage in multi-process data loaders]"
        "(https://ppwwyyxx.com/blog/2022/Demystify-RAM-Usage-in-Multiprocess-DataLoader/)",
    ),
    static=False,
    invalid=_examples(_dedent('''
        from torch.utils.data import DataLoader, Dataset


        class Images(Dataset):
            def __init__(self, records):
                self.files = [r["file"] for r in records]     # millions of str objects
                self.labels = {r["file"]: r["label"] for r in records}

            def __len__(self):
                return len(self.files)

            def __getitem__(self, i):
                return self.labels[self.files[i]]


        if __name__ == "__main__":
            loader = DataLoader(Images(load_records()), batch_size=256, num_workers=8,
                                persistent_workers=True, multiprocessing_context="fork")
            for epoch in range(90):
                for batch in loader:
                    pass
    ''')),
    valid=_examples(_dedent('''
        import numpy as np
        from torch.utils.data import DataLoader, Dataset


        class Images(Dataset):
            def __init__(self, records):
                self.files = np.array([r["file"] for r in records], dtype=np.bytes_)
                self.labels = np.array([r["label"] for r in records], dtype=np.int64)

            def __len__(self):
                return len(self.files)

            def __getitem__(self, i):
                return int(self.labels[i])


        if __name__ == "__main__":
            loader = DataLoader(Images(load_records()), batch_size=256, num_workers=8,
                                persistent_workers=True, multiprocessing_context="fork")
            for epoch in range(90):
                for batch in loader:
                    pass
    ''')),
))
