"""assert_picklable / find_unpicklable on real objects, against what spawn really does.

Every failing case is also started for real as a spawn ``Process``: its error must be
the one the culprit reports.  Objects that pickle in the parent but not in the worker
(DLW104, torch.Generator) are sent to real spawned children in a subprocess, whose
stderr must show the error the culprit predicted.
"""
import functools
import inspect
import io
import json
import multiprocessing
import os
import pickle
import socket
import sqlite3
import subprocess
import tarfile
import sys
import textwrap
import threading
import zipfile

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flake8_dlworker.catalog import RULES
from tiers import starts_torch
from flake8_dlworker.testing import (
    Culprit, UnpicklableError, _draw, assert_picklable, find_unpicklable,
    find_unpicklable_in_loader, random_generators)

HERE = os.path.abspath(__file__)


# --- transforms-like building blocks, as torchvision's --------------------------

class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


class Lambda:
    def __init__(self, lambd):
        self.lambd = lambd

    def __call__(self, x):
        return self.lambd(x)


class Slotted:
    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner


class Dataset(torch.utils.data.Dataset):
    def __init__(self, transform=None, **attrs):
        self.transform = transform
        self.data = torch.arange(6.0)
        self.__dict__.update(attrs)

    def __len__(self):
        return 6

    def __getitem__(self, i):
        x = self.data[i]
        return self.transform(x) if self.transform else x


def double(x):
    return 2 * x


def scale(x, factor=1):
    return x * factor


def read_lines():
    yield "a"


def _noop(*args):
    pass


@starts_torch
def spawn_start_error(obj):
    """The error a real spawn ``Process.start()`` raises for ``obj``, as the culprit writes it."""
    proc = multiprocessing.get_context("spawn").Process(target=_noop, args=(obj,))
    try:
        proc.start()
    except Exception as exc:
        name = type(exc).__qualname__
        if type(exc).__module__ != "builtins":
            name = "%s.%s" % (type(exc).__module__, name)
        return "%s: %s" % (name, exc)
    proc.join(60)
    pytest.fail("spawn started a worker with %r" % (obj,))


def line_of(func):
    return func.__code__.co_firstlineno


# --- good objects ----------------------------------------------------------------

def test_good_objects_are_none_and_really_reach_a_spawned_worker():
    good = [
        Dataset(Compose([double, functools.partial(scale, factor=3), Lambda(double)])),
        torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU()),
        {"tensor": torch.zeros(3), "nested": [(1, "a", b"b", None, 2.5)], "slot": Slotted(1)},
        multiprocessing.get_context("spawn").Queue(),
        double,
        # spawn hands a socket to the child as a file descriptor (reduction.DupFd)
        socket.socket(),
    ]
    for obj in good:
        assert find_unpicklable(obj) is None, obj
        assert_picklable(obj)  # does not raise
    assert _spawned_exit(good) == 0


@starts_torch
def _spawned_exit(objects):
    """The exit status of a real spawned worker given ``objects``."""
    proc = multiprocessing.get_context("spawn").Process(target=_noop, args=tuple(objects))
    proc.start()
    proc.join(120)
    return proc.exitcode


# --- functions and classes that a worker cannot import ---------------------------

def test_lambda_inside_a_compose_names_the_attribute_path():
    lambd = lambda x: x + 1  # noqa: E731
    dataset = Dataset(Compose([double, double, Lambda(lambd)]))
    culprit = find_unpicklable(dataset, "dataset")
    source_line = open(HERE).read().splitlines()[line_of(lambd) - 1]
    assert culprit == Culprit(
        path="dataset.transform.transforms[2].lambd",
        type_name="function",
        what="lambda defined at %s:%d" % (os.path.relpath(HERE), line_of(lambd)),
        code="DLW102",
        file=HERE,
        line=line_of(lambd),
        error=spawn_start_error(dataset),
        # the object that holds it, and the column of the lambda's body (for the patch)
        owner="Lambda",
        owner_file=HERE,
        owner_line=inspect.getsourcelines(Lambda)[1],
        col=source_line.index("x + 1"),
        # where Lambda keeps it: self.lambd = lambd in its __init__
        attribute="lambd",
        assigned_file=HERE,
        assigned_line=inspect.getsourcelines(Lambda)[1] + 2,
        assigned_col=len("        self.lambd = "),
        assigned_in="Lambda.__init__",
        assigned_parameter="lambd",  # the caller made it; Lambda keeps its parameter
    )
    assert str(culprit) == "dataset.transform.transforms[2].lambd: %s (DLW102)" % culprit.what
    assert culprit.error == spawn_start_error(lambd)


def test_module_level_lambda_is_dlw102():
    culprit = find_unpicklable({"collate": MODULE_LAMBDA}, "kw")
    assert (culprit.path, culprit.code, culprit.line) == (
        "kw['collate']", "DLW102", line_of(MODULE_LAMBDA))
    assert "attribute lookup <lambda>" in culprit.error
    assert culprit.error == spawn_start_error(MODULE_LAMBDA)


MODULE_LAMBDA = lambda b: b  # noqa: E731


def test_nested_function_through_partial_is_dlw103():
    def pad(batch, size):
        return batch

    collate = functools.partial(pad, size=4)
    culprit = find_unpicklable(collate, "collate_fn")
    assert culprit.path == "collate_fn.func"
    assert culprit.code == "DLW103"
    assert culprit.what == "function '%s' defined at %s:%d" % (
        pad.__qualname__, os.path.relpath(HERE), line_of(pad))
    assert culprit.error == spawn_start_error(collate)
    # a partial of a module-level function with a bad keyword value
    bad_kw = functools.partial(scale, factor=threading.Lock())
    assert find_unpicklable(bad_kw, "fn").path == "fn.keywords['factor']"


def test_nested_class_instance_and_nested_dataset_class_are_dlw103():
    class Crop:
        def __call__(self, x):
            return x

    class LocalDataset(Dataset):
        pass

    culprit = find_unpicklable(Dataset(Compose([double, Crop()])), "dataset")
    assert culprit.path == "dataset.transform.transforms[1]"
    assert culprit.code == "DLW103"
    assert culprit.what.startswith("instance of class '%s' defined at " % Crop.__qualname__)
    assert culprit.type_name == "%s.%s" % (__name__, Crop.__qualname__)

    dataset = LocalDataset()
    culprit = find_unpicklable(dataset, "dataset")
    assert culprit.path == "dataset"
    assert culprit.code == "DLW103"
    assert culprit.error == spawn_start_error(dataset)
    # the class object itself
    culprit = find_unpicklable([Crop], "classes")
    assert (culprit.path, culprit.type_name, culprit.code) == ("classes[0]", "type", "DLW103")
    assert culprit.what.startswith("class '%s' defined at" % Crop.__qualname__)


def test_nested_class_line_is_its_class_statement():
    class Marker:  # the line reported
        pass

    culprit = find_unpicklable(Marker(), "x")
    with open(HERE) as f:
        source = f.read().splitlines()
    assert source[culprit.line - 1].strip() == "class Marker:  # the line reported"


def test_bound_method_of_a_dataset_holding_a_file(tmp_path):
    path = tmp_path / "labels.txt"
    path.write_text("a\n")
    with open(path) as handle:
        dataset = Dataset(labels=handle)
        culprit = find_unpicklable(dataset.__getitem__, "collate_fn")
    assert culprit.path == "collate_fn.__self__.labels"
    assert culprit.code == "DLW108"


# --- handles ---------------------------------------------------------------------

@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "data.txt"
    path.write_text("x\n")
    with open(path) as handle:
        yield handle


@pytest.fixture
def binary_file(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(b"x")
    with open(path, "rb") as handle:
        yield handle


@pytest.fixture
def zip_archive(tmp_path):
    path = tmp_path / "images.zip"
    zipfile.ZipFile(path, "w").close()
    with zipfile.ZipFile(path) as archive:
        yield archive


@pytest.fixture
def tar_archive(tmp_path):
    path = tmp_path / "images.tar"
    tarfile.open(path, "w").close()
    with tarfile.open(path) as archive:
        yield archive


@pytest.fixture
def connection(tmp_path):
    conn = sqlite3.connect(str(tmp_path / "db.sqlite"))
    yield conn
    conn.close()


HANDLES = {
    # name -> (how to make it, expected type_name)
    "text_file": (lambda r: r.getfixturevalue("text_file"), "_io.TextIOWrapper"),
    "binary_file": (lambda r: r.getfixturevalue("binary_file"), "_io.BufferedReader"),
    "lock": (lambda r: threading.Lock(), "_thread.lock"),
    "rlock": (lambda r: threading.RLock(), "_thread.RLock"),
    "sqlite": (lambda r: r.getfixturevalue("connection"), "sqlite3.Connection"),
    "generator": (lambda r: read_lines(), "generator"),
    "module": (lambda r: json, "module"),
    "bytesio_reader": (lambda r: io.BufferedReader(io.BytesIO(b"x")), "_io.BufferedReader"),
    # reported as the archive, not as the file object inside it
    "zip": (lambda r: r.getfixturevalue("zip_archive"), "zipfile.ZipFile"),
    "tar": (lambda r: r.getfixturevalue("tar_archive"), "tarfile.TarFile"),
}


@pytest.mark.parametrize("name", sorted(HANDLES))
def test_handle_on_the_dataset_is_dlw108(name, request):
    make, type_name = HANDLES[name]
    handle = make(request)
    dataset = Dataset(Compose([double]), handle=handle)
    culprit = find_unpicklable(dataset, "dataset")
    assert culprit.path == "dataset.handle"
    assert culprit.type_name == type_name
    assert culprit.code == "DLW108"
    assert culprit.error == spawn_start_error(dataset)
    assert culprit.error == spawn_start_error(handle)
    assert "DLW108" in str(culprit)


def test_handle_names_say_what_it_is(text_file, monkeypatch):
    # file names show relative to the working directory when under it, else in full
    assert find_unpicklable(text_file).what == (
        "open file handle on %r (_io.TextIOWrapper)" % text_file.name)
    monkeypatch.chdir(os.path.dirname(text_file.name))
    assert find_unpicklable(text_file).what == "open file handle on 'data.txt' (_io.TextIOWrapper)"
    monkeypatch.undo()
    gen = find_unpicklable(read_lines())
    assert gen.what == "generator object from 'read_lines' defined at %s:%d" % (
        os.path.relpath(HERE), line_of(read_lines))
    assert find_unpicklable(json).what == "module object 'json'"


class Shards:
    def __init__(self, archive):
        self._open(archive)

    def _open(self, archive):
        self.archive = archive


class Guarded:
    def __init__(self):
        self.lock = threading.Lock()


class ShardSet(Guarded, torch.utils.data.Dataset):
    def __init__(self, archive):
        super().__init__()
        self.shards = Shards(archive)

    def unlock(self):
        self.lock = None


def _assigned(culprit):
    return (culprit.path, culprit.attribute, culprit.assigned_file, culprit.assigned_in,
            open(culprit.assigned_file).read().splitlines()[culprit.assigned_line - 1].strip())


def test_the_culprit_names_where_the_users_class_assigns_the_attribute(zip_archive):
    """The attribute that keeps the culprit, found in the class of the innermost object
    on the path that the user wrote: __init__ before the other methods, base classes in
    MRO order, a helper method that __init__ calls; a known handle of the record (a thread
    pool) is the culprit itself, not the queue inside it."""
    dataset = ShardSet(zip_archive)
    culprit = find_unpicklable(dataset, "dataset")
    assert _assigned(culprit) == (
        "dataset.lock", "lock", HERE, "Guarded.__init__", "self.lock = threading.Lock()")
    # what the pytest plugin's failure and the doctor's evidence say of it
    assert culprit.kept_at() == "kept as self.lock, assigned at %s:%d in Guarded.__init__()" % (
        os.path.relpath(HERE), culprit.assigned_line)
    dataset.lock = None
    assert _assigned(find_unpicklable(dataset, "dataset")) == (
        "dataset.shards.archive", "archive", HERE, "Shards._open", "self.archive = archive")
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        culprit = find_unpicklable(Dataset(Compose([double]), pool=pool), "dataset")
    assert (culprit.path, culprit.code) == ("dataset.pool", "DLW108")
    assert culprit.what.startswith("ThreadPoolExecutor (")
    assert culprit.attribute is None  # Dataset keeps it through __dict__.update(attrs)
    assert culprit.kept_at() is None
    with ThreadPoolExecutor(1) as pool:
        dataset = ShardSet(pool)
        dataset.unlock()
        culprit = find_unpicklable(dataset, "dataset")
    assert culprit.path == "dataset.shards.archive"
    assert _assigned(culprit)[1:4] == ("archive", HERE, "Shards._open")


def test_a_known_handle_inside_nested_containers():
    culprit = find_unpicklable(Dataset(events={"start": [threading.Event()]}), "dataset")
    assert culprit.path == "dataset.events['start'][0]"
    assert culprit.what == "threading.Event (threading.Event)"
    assert culprit.code == "DLW108"
    culprit = find_unpicklable((1, [2, {"k": (3, Slotted(threading.RLock()))}]), "t")
    assert culprit.path == "t[1][1]['k'][1].inner"


def test_torch_generator_pickles_in_the_parent_but_is_dlw108():
    dataset = Dataset(gen=torch.Generator().manual_seed(0))
    culprit = find_unpicklable(dataset, "dataset")
    if torch.multiprocessing.get_sharing_strategy() != "file_descriptor":
        assert culprit is None  # rebuilt by file name: it does reach the worker
        return
    assert culprit.path == "dataset.gen"
    assert culprit.code == "DLW108"
    assert culprit.type_name == "torch._C.Generator"
    assert culprit.error.startswith("RuntimeError: unable to resize file")
    # the storages of live tensors are shared by descriptor too, and stay open
    assert find_unpicklable(Dataset(state=torch.Generator().get_state())) is None


def test_first_culprit_in_pickling_order_and_cycles(text_file):
    dataset = Dataset(first=threading.Lock(), second=text_file)
    assert find_unpicklable(dataset, "dataset").path == "dataset.first"
    # an attribute that leads back to the dataset is not the culprit
    looped = Dataset()
    looped.transform = Compose([looped])
    looped.me = looped
    looped.handle = text_file
    assert find_unpicklable(looped, "dataset").path == "dataset.handle"


def test_large_list_with_one_bad_item_is_found_fast():
    items = [{"id": i, "label": "x%d" % i} for i in range(20000)]
    items[15000]["transform"] = lambda x: x  # noqa: E731
    culprit = find_unpicklable(Dataset(items=items), "dataset")
    assert culprit.path == "dataset.items[15000]['transform']"


def test_nn_module_children_read_as_attributes():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2))
    model.head = torch.nn.Linear(2, 1)
    model.head.hook = lambda x: x  # noqa: E731
    assert find_unpicklable(model, "model").path == "model.head.hook"


class Refuses:
    """Refuses to be pickled in its own way, and has a property that raises."""

    def __reduce__(self):
        raise ValueError("not today")

    @property
    def name(self):
        raise RuntimeError("no name either")


class OddReduce:
    def __reduce__(self):
        return (OddReduce, "not a tuple of arguments")


def test_odd_objects_give_a_culprit_not_an_error():
    culprit = find_unpicklable(Dataset(weird=Refuses()), "dataset")
    assert (culprit.path, culprit.code) == ("dataset.weird", None)
    assert culprit.what == "object of type %s.Refuses" % __name__
    assert culprit.error == "ValueError: not today" == spawn_start_error(Refuses())
    culprit = find_unpicklable([OddReduce()], "items")
    assert culprit.path == "items[0]"
    assert culprit.error == spawn_start_error(OddReduce())


# --- assert_picklable ------------------------------------------------------------

def test_assert_picklable_raises_an_assertion_error_with_the_culprit(text_file):
    with pytest.raises(UnpicklableError) as info:
        assert_picklable(Dataset(handle=text_file), "dataset")
    assert isinstance(info.value, AssertionError)
    assert str(info.value) == str(info.value.culprit)
    assert str(info.value).startswith("dataset.handle: open file handle on ")
    assert str(info.value).endswith("(_io.TextIOWrapper) (DLW108)")


def test_codes_are_catalog_codes():
    for code in ("DLW102", "DLW103", "DLW104", "DLW108"):
        assert code in RULES


def test_loader_payload_paths():
    loader = torch.utils.data.DataLoader(
        Dataset(Compose([Lambda(lambda x: x)])), num_workers=2)  # noqa: DLW102
    culprit = find_unpicklable_in_loader(loader)
    assert culprit.path == "loader.dataset.transform.transforms[0].lambd"
    # a loader given to find_unpicklable / assert_picklable: what it sends to workers
    assert find_unpicklable(loader, "train_loader") == culprit._replace(
        path="train_loader.dataset.transform.transforms[0].lambd")
    fine = torch.utils.data.DataLoader(Dataset(), collate_fn=double, num_workers=2,
                                       generator=torch.Generator())  # stays in the parent
    assert find_unpicklable_in_loader(fine) is None
    assert_picklable(fine)


# --- random generators kept on a dataset (what the pytest plugin reads in workers) --

def test_random_generators_are_found_and_a_draw_leaves_them_untouched():
    import random

    import numpy as np

    dataset = Dataset(Compose([Box(rng=random.Random(1))]), np_rng=np.random.default_rng(2),
                      legacy=np.random.RandomState(3), gen=torch.Generator().manual_seed(4),
                      system=random.SystemRandom(), nested={"k": [np.random.default_rng(5)]})
    found = dict(random_generators(dataset, "dataset"))
    assert sorted(found) == ["dataset.gen", "dataset.legacy", "dataset.nested['k'][0]",
                             "dataset.np_rng", "dataset.transform.transforms[0].rng"]
    for path, rng in found.items():
        first = _draw(rng)
        assert _draw(rng) == first, path  # drawn from a copy: the generator did not move
    assert found["dataset.np_rng"].random() == first_of(np.random.default_rng(2))
    assert torch.rand(1, generator=found["dataset.gen"]).item() == _draw(
        torch.Generator().manual_seed(4))


def first_of(rng):
    return rng.random()


# --- a culprit at any place in any structure -------------------------------------

class Box:
    def __init__(self, **attrs):
        self.__dict__.update(attrs)


def _place(structure, value):
    """Put ``value`` at a path in nested containers: returns (object, path)."""
    kind, key, inner = structure
    obj, path = _place(inner, value) if inner is not None else (value, "")
    if kind == "list":
        return [0] * key + [obj], "[%d]%s" % (key, path)
    if kind == "tuple":
        return tuple(["x"] * key) + (obj,), "[%d]%s" % (key, path)
    if kind == "dict":
        return {"k%d" % i: i for i in range(key)} | {"key": obj}, "['key']%s" % path
    return Box(**{"a%d" % i: i for i in range(key)}, attr=obj), ".attr%s" % path


_structures = st.recursive(
    st.none(),
    lambda inner: st.tuples(st.sampled_from(["list", "tuple", "dict", "box"]),
                            st.integers(0, 4), inner),
    max_leaves=6,
)


@settings(max_examples=60, deadline=None)
@given(_structures, st.sampled_from(["lambda", "lock", "generator"]))
def test_path_of_a_bad_value_anywhere(structure, bad):
    value = {"lambda": lambda x: x, "lock": threading.Lock(),  # noqa: E731
             "generator": read_lines()}[bad]
    obj, path = _place(structure, value) if structure is not None else (value, "")
    culprit = find_unpicklable(obj, "root")
    assert culprit.path == "root" + path
    assert culprit.code == ("DLW102" if bad == "lambda" else "DLW108")


# --- objects that only fail in the worker, checked against real spawned children --

CHILD_CHECK = textwrap.dedent('''
    import json, multiprocessing, sys
    from flake8_dlworker.testing import find_unpicklable

    def report(obj, name):
        culprit = find_unpicklable(obj, name)
        print(json.dumps(culprit and culprit._asdict()), flush=True)
        # then really send it to a spawned worker: its stderr must show the same error
        proc = multiprocessing.get_context("spawn").Process(target=id, args=(obj,))
        proc.start()
        proc.join(60)
        print(json.dumps(proc.exitcode), flush=True)
''')


@starts_torch
def _run_child_check(tmp_path, args, cwd):
    proc = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0, proc.stderr
    pairs = [(json.loads(lines[i]), json.loads(lines[i + 1])) for i in range(0, len(lines), 2)]
    return pairs, proc.stderr


def test_dlw104_defined_only_in_the_main_guard(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(CHILD_CHECK + textwrap.dedent('''
        class Top:
            pass

        def top_fn(batch):
            return batch

        if __name__ == "__main__":
            class Numbers:
                pass

            def collate(batch):
                return batch

            report([Top(), top_fn], "fine")
            report(Numbers(), "dataset")
            report({"collate_fn": collate}, "kw")
    '''))
    results, stderr = _run_child_check(tmp_path, ["train.py"], tmp_path)
    (fine, fine_exit), (dataset, dataset_exit), (kw, kw_exit) = results
    assert (fine, fine_exit) == (None, 0)
    lines = script.read_text().splitlines()
    assert dataset["path"] == "dataset"
    assert dataset["code"] == "DLW104"
    assert lines[dataset["line"] - 1].strip() == "class Numbers:"
    assert dataset["what"] == (
        "instance of class 'Numbers' defined at train.py:%d, only inside the __main__ guard"
        % dataset["line"])
    assert kw["path"] == "kw['collate_fn']"
    assert kw["what"].startswith("function 'collate' defined at train.py:")
    assert dataset_exit == kw_exit == 1
    assert dataset["error"] in stderr
    assert kw["error"] in stderr


def test_dlw104_package_main_and_interactive(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(CHILD_CHECK + textwrap.dedent('''
        class Numbers:
            pass

        report(Numbers(), "dataset")
    '''))
    ((culprit, exitcode),), stderr = _run_child_check(tmp_path, ["-m", "pkg"], tmp_path)
    assert culprit["code"] == "DLW104"
    assert culprit["what"] == (
        "instance of class 'Numbers' defined at %s:%d, in a package's __main__.py run with -m"
        % (os.path.join("pkg", "__main__.py"), culprit["line"]))
    assert exitcode == 1 and culprit["error"] in stderr

    code = CHILD_CHECK + "\nclass Numbers:\n    pass\n\nreport(Numbers(), 'dataset')\n"
    ((culprit, exitcode),), stderr = _run_child_check(tmp_path, ["-c", code], tmp_path)
    assert culprit["code"] == "DLW104"
    assert culprit["what"] == (
        "instance of class 'Numbers' in an interactive session (a notebook cell, IPython or "
        "the REPL), whose __main__ workers cannot import: move it into a module")
    assert exitcode == 1 and culprit["error"] in stderr


def test_torch_generator_fails_in_a_real_spawned_worker(tmp_path):
    if torch.multiprocessing.get_sharing_strategy() != "file_descriptor":
        pytest.skip("torch.Generator reaches the worker under file_system sharing")
    script = tmp_path / "gen.py"
    script.write_text(CHILD_CHECK + textwrap.dedent('''
        import torch

        class Noisy:
            def __init__(self):
                self.gen = torch.Generator().manual_seed(0)

        if __name__ == "__main__":
            report(Noisy(), "dataset")
    '''))
    ((culprit, exitcode),), stderr = _run_child_check(tmp_path, ["gen.py"], tmp_path)
    assert (culprit["path"], culprit["code"]) == ("dataset.gen", "DLW108")
    assert exitcode == 1 and culprit["error"] in stderr


def test_a_secret_used_as_a_dict_key_never_appears_in_the_path(monkeypatch):
    """A dataset keyed by a token from the environment: the report names the key's type
    and position, not the token; ordinary keys stay readable."""
    token = "hf_Zq8LmN3pR7tV1xY5wB2cD9"
    monkeypatch.setenv("HF_TOKEN", token)
    for secret in (token, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"):
        culprit = find_unpicklable({"sizes": [1, 2], "locks": {secret: threading.Lock()}},
                                   root="dataset.cache")
        assert culprit is not None
        assert secret not in str(culprit) and secret not in culprit.path
        assert culprit.path == "dataset.cache['locks'][<str key #0>]", culprit.path


class _CountsItsPickling:
    """Its ``__getstate__`` has a side effect: it counts its calls."""

    calls = 0

    def __init__(self):
        self.items = [1, 2, 3]

    def __getstate__(self):
        type(self).calls += 1
        return self.__dict__


class _ListWithState(list):
    """A list subclass: its reduction carries the items as an iterator."""

    def __getstate__(self):
        _CountsItsPickling.calls += 1
        return {"tag": "kept"}


def test_the_probes_reductions_are_reused_by_the_first_workers_real_pickling():
    """``measure(kept=...)`` keeps what the user's own reductions returned; the next
    ``Process`` that ``multiprocessing.reduction.dump`` pickles reuses it (no second
    call), the ones after it call them again, and each dump loads to the same values."""
    from multiprocessing import context, get_context, reduction

    from flake8_dlworker.testing import KeptReductions, measure

    _CountsItsPickling.calls = 0
    dataset = _CountsItsPickling()
    items = _ListWithState([4, 5])
    dataset.more = items
    kept = KeptReductions()
    assert measure(dataset, "dataset", kept=kept)[0] is None
    assert _CountsItsPickling.calls == 2  # the dataset and the list subclass, once each
    workers = [get_context("spawn").Process(target=print, args=(dataset,)) for _ in range(2)]
    dumps = []
    context.set_spawning_popen(object())  # as spawn's Popen does while it dumps
    try:
        with kept.reused_by_next_worker():
            for worker in workers:
                buf = io.BytesIO()
                reduction.dump(worker, buf)
                dumps.append(buf.getvalue())
    finally:
        context.set_spawning_popen(None)
    assert _CountsItsPickling.calls == 4  # the second worker only, its two reductions
    for dump in dumps:
        received = pickle.loads(dump)._args[0]
        assert received.items == [1, 2, 3] and list(received.more) == [4, 5]
        assert received.more.tag == "kept"
