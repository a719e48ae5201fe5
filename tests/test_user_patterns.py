"""Patterns of real training code the static rules follow (issue 39): settings read from
argparse and config objects, handles made by helper functions and progress bars, and
decorators. Each claim about pickling is checked by pickling for real."""
import importlib
import pickle
import subprocess
import sys
import textwrap

import pytest

from flake8_dlworker.rules.state import PROGRESS_BARS


def flake8(path, *options):
    cmd = [sys.executable, "-m", "flake8", "--isolated", "--select", "DLW", *options, str(path)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    return out.stdout


def _codes(stdout):
    return [(int(line.split(":")[1]), line.split()[1]) for line in stdout.splitlines()]


@pytest.mark.parametrize("qualname", sorted(PROGRESS_BARS))
def test_a_disabled_tqdm_bar_pickles_and_is_not_reported(qualname, tmp_path):
    module = pytest.importorskip(qualname.rsplit(".", 1)[0])
    name = qualname.rsplit(".", 1)[1]
    first = "8" if name == "trange" else "range(8)"
    pickle.dumps(getattr(module, name)(eval(first), disable=True))
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""\
        from torch.utils.data import DataLoader, Dataset
        from {module} import {name}


        class Counted(Dataset):
            def __init__(self):
                self.quiet = {name}({first}, disable=True)
                self.loud = {name}({first}, disable=False)

            def __len__(self):
                return 8

            def __getitem__(self, i):
                return i


        if __name__ == "__main__":
            for batch in DataLoader(Counted(), num_workers=2):
                pass
        """).format(module=qualname.rsplit(".", 1)[0], name=name, first=first))
    assert _codes(flake8(script)) == [(8, "DLW108")]


DECORATORS = textwrap.dedent("""\
    import functools


    def bare(fn):
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)
        return wrapper


    def named(label):
        def decorator(fn):
            def wrapper(*args, **kwargs):
                return fn(*args, **kwargs)
            return wrapper
        return decorator


    def wrapped(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)
        return wrapper


    def updated(fn):
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)
        return functools.update_wrapper(wrapper, fn)


    def registered(fn):
        return fn


    @bare
    def collate_bare(batch):
        return batch


    @named("collate")
    def collate_named(batch):
        return batch


    @wrapped
    def collate_wrapped(batch):
        return batch


    @updated
    def collate_updated(batch):
        return batch


    @registered
    def collate_registered(batch):
        return batch
""")
#: the decorated functions whose name holds a local wrapper
UNPICKLABLE = {"collate_bare", "collate_named"}


def test_a_decorator_that_returns_a_bare_wrapper_is_dlw103_and_wraps_makes_it_pickle(
        tmp_path, monkeypatch):
    (tmp_path / "decorated.py").write_text(DECORATORS)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("decorated")
    names = ["collate_bare", "collate_named", "collate_wrapped", "collate_updated",
             "collate_registered"]
    for name in names:
        if name in UNPICKLABLE:
            with pytest.raises((AttributeError, pickle.PicklingError), match="local object"):
                pickle.dumps(getattr(module, name))
        else:
            assert pickle.loads(pickle.dumps(getattr(module, name))) is getattr(module, name)
    script = tmp_path / "train.py"
    loaders = "\n".join("    DataLoader(list(range(8)), num_workers=2, collate_fn=%s)" % name
                        for name in names)
    script.write_text(DECORATORS + textwrap.dedent("""\


        if __name__ == "__main__":
            from torch.utils.data import DataLoader

        """) + loaders + "\n")
    first = len(DECORATORS.splitlines()) + 6
    out = flake8(script)
    found = _codes(out)
    assert found == [(first, "DLW103"), (first + 1, "DLW103")], found
    # the wrapper cannot be moved to module level: the message gives the fix that works
    lines = out.splitlines()
    assert lines[0].endswith("decorate it with @functools.wraps(fn) in bare()"), lines
    assert lines[1].endswith("decorate it with @functools.wraps(fn) in decorator()"), lines
    sibling = tmp_path / "train_beside.py"  # the decorators imported from a module beside
    sibling.write_text(textwrap.dedent("""\
        from torch.utils.data import DataLoader

        from decorated import bare, wrapped


        @bare
        def collate_a(batch):
            return batch


        @wrapped
        def collate_b(batch):
            return batch


        if __name__ == "__main__":
            DataLoader(list(range(8)), num_workers=2, collate_fn=collate_a)
            DataLoader(list(range(8)), num_workers=2, collate_fn=collate_b)
        """))
    assert _codes(flake8(sibling)) == [(17, "DLW103")]


def test_a_handle_returned_by_a_helper_is_reported_where_the_dataset_keeps_it(tmp_path):
    (tmp_path / "store.py").write_text(textwrap.dedent("""\
        import sqlite3


        def connect(path):
            db = sqlite3.connect(path)
            return db


        def summary(path):
            with open(path) as handle:
                return handle.read()


        def lines(path):
            with open(path) as handle:
                yield from handle
        """))
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""\
        from torch.utils.data import DataLoader, Dataset

        import store


        def open_log(path):
            return open(path, "a")


        class Rows(Dataset):
            def __init__(self, path):
                self.db = store.connect(path)
                self.log = open_log(path + ".log")
                self.text = store.summary(path)

            def __len__(self):
                return 8

            def __getitem__(self, i):
                return i


        if __name__ == "__main__":
            for batch in DataLoader(Rows("rows.db"), num_workers=2):
                pass
        """))
    assert _codes(flake8(script)) == [(12, "DLW108"), (13, "DLW108")]


ARGPARSE = textwrap.dedent("""\
    import argparse

    from torch.utils.data import DataLoader


    def get_args():
        parser = argparse.ArgumentParser()
        parser.add_argument("--num-workers", "-j", type=int, default={workers})
        parser.add_argument("--persistent", action="{action}")
        return parser.parse_args()


    def main(args):
        DataLoader(list(range(8)), num_workers=args.num_workers,
                   persistent_workers=args.persistent)


    if __name__ == "__main__":
        main(get_args())
""")


@pytest.mark.parametrize("workers, action, reported", [
    ("0", "store_false", True),     # persistent_workers defaults to True
    ('"0"', "store_false", True),   # argparse converts a string default with its type
    ("0", "store_true", False),     # persistent_workers defaults to False
    ("2", "store_false", False),    # two workers
    ("None", "store_false", False),
])
def test_argparse_defaults_through_a_function_and_a_parameter(tmp_path, workers, action,
                                                              reported):
    script = tmp_path / "train.py"
    script.write_text(ARGPARSE.format(workers=workers, action=action))
    assert _codes(flake8(script)) == ([(15, "DLW106")] if reported else [])


def test_an_option_whose_dest_two_flags_share_is_not_guessed(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""\
        import argparse

        from torch.utils.data import DataLoader

        parser = argparse.ArgumentParser()
        parser.add_argument("--workers", type=int, default=0)
        parser.add_argument("--fast", dest="workers", action="store_const", const=8)
        args = parser.parse_args()

        if __name__ == "__main__":
            DataLoader(list(range(8)), num_workers=args.workers, persistent_workers=True)
        """))
    assert flake8(script) == ""


WEBDATASET_STAGES = textwrap.dedent("""\
    import webdataset as wds
    from torch.utils.data import DataLoader


    def label(sample):
        return sample["cls"]


    def main(urls):
        stages = [
            wds.SimpleShardList(urls),
            wds.tarfile_to_samples(),
            wds.map({first}),
        ]
        listed = wds.DataPipeline(*stages)
        direct = wds.DataPipeline(wds.SimpleShardList(urls), wds.map({second}))
        return DataLoader(listed, num_workers=2), DataLoader(direct, num_workers=2)


    if __name__ == "__main__":
        main(["shard-0.tar"])
""")


@pytest.mark.parametrize("first, second, reported", [
    ('lambda s: s["cls"]', 'lambda s: s["cls"]', [(13, "DLW102"), (16, "DLW102")]),
    ("label", "label", []),
])
def test_webdataset_stage_lists_keep_their_functions(tmp_path, first, second, reported):
    script = tmp_path / "train.py"
    script.write_text(WEBDATASET_STAGES.format(first=first, second=second))
    assert _codes(flake8(script)) == reported


GUARDED_READS = textwrap.dedent("""\
    import numpy
    from torch.utils.data import DataLoader, Dataset

    table = {}


    def collate(batch):
        return [helper(b) for b in batch]


    def helper(b):
        return b * args.scale


    class Words(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            x = [c for c in "abc"]

            def inner():
                w = 1
                return w
            return self.encode(x) + [table.get(c) for c in x] + [inner()]

        def encode(self, x):
            return [np.float32(len(x))]

        def describe(self):
            return summary


    if __name__ == "__main__":
        import numpy as np
        args = object()
        table = {"a": 1}
        summary = "only the main process reads it"
        c = w = x = 3
        DataLoader(Words(), num_workers=2)
        DataLoader([1], num_workers=2, collate_fn=collate)
        DataLoader(Words(), num_workers=0)
    """)


def test_names_worker_code_reads_that_only_the_guard_binds(tmp_path):
    """DLW104 where the guard binds a name that code run in a worker reads: a module
    imported under the guard (read by a method __getitem__ calls), the parsed arguments
    (read by a function the collate_fn calls). Not a name the module binds outside the
    guard too (``table``), a comprehension's, a nested function's or a local variable
    (``c``, ``w``, ``x``), nor a method no worker runs (``describe``)."""
    script = tmp_path / "train.py"
    script.write_text(GUARDED_READS)
    out = flake8(script)
    assert _codes(out) == [(35, "DLW104"), (36, "DLW104")], out
    assert "module 'np' defined inside the __main__ guard reaches a worker as a name " \
           "Words.encode() reads" in out
    assert "global 'args' defined inside the __main__ guard reaches a worker as a name " \
           "helper() reads" in out
    assert flake8(script, "--dlw-start-method", "fork") == ""


DATAMODULE = textwrap.dedent("""\
    from torch.utils.data import DataLoader


    class Data:
        def __init__(self, batch_size=4, num_workers=0):
            self.batch_size = batch_size
            self.num_workers = num_workers

        def train_dataloader(self):
            return DataLoader(range(8), batch_size=self.batch_size,
                              num_workers=self.num_workers, persistent_workers=True)


    if __name__ == "__main__":
        for batch in Data(%s).train_dataloader():
            print(batch)
    """)


@pytest.mark.parametrize("args, found", [
    ("", [(11, "DLW106")]), ("8", [(11, "DLW106")]), ("num_workers=0", [(11, "DLW106")]),
    ("num_workers=2", []), ("4, 2", []), ("**config", [])])
def test_a_class_default_of_0_workers_is_dlw106_unless_a_call_gives_more(
        tmp_path, args, found):
    """``num_workers=self.num_workers`` kept from ``__init__``'s default of 0: DLW106
    when every call of the class in the module leaves it at 0; not when one passes
    another count, or an unknown one."""
    script = tmp_path / "train.py"
    script.write_text(DATAMODULE % args)
    out = flake8(script)
    assert _codes(out) == found, out
    assert not found or "with the class's default (Data(num_workers=0))" in out
