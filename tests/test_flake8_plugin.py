"""The plugin as flake8 loads it: registration, options, noqa, the prefilter."""
import subprocess
import sys
import textwrap

import pytest

UNGUARDED = textwrap.dedent("""\
    from torch.utils.data import DataLoader

    loader = DataLoader(list(range(8)), num_workers=2, collate_fn=lambda b: b)
    for batch in loader:
        pass
""")


def flake8(path, *options):
    cmd = [sys.executable, "-m", "flake8", "--isolated", "--select", "DLW", *options, str(path)]
    return subprocess.run(cmd, capture_output=True, text=True)


def test_reports_with_default_spawn(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(UNGUARDED)
    out = flake8(script)
    assert out.returncode == 1, out.stderr
    assert out.stdout.splitlines() == [
        "%s:3:63: DLW102 lambda passed as collate_fn is not picklable under spawn; "
        "define a module-level function" % script,
        "%s:4:1: DLW101 unguarded module-level code starts worker processes "
        "(DataLoader iterated at line 4); move it under if __name__ == \"__main__\":" % script,
    ]


def test_forkserver_is_named_in_the_message(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(UNGUARDED)
    out = flake8(script, "--dlw-start-method", "forkserver")
    assert "not picklable under forkserver" in out.stdout


def test_fork_start_method_silences(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(UNGUARDED)
    out = flake8(script, "--dlw-start-method", "fork")
    assert (out.returncode, out.stdout) == (0, "")


def test_start_method_from_config(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(UNGUARDED)
    (tmp_path / "setup.cfg").write_text("[flake8]\nselect = DLW\ndlw-start-method = fork\n")
    cmd = [sys.executable, "-m", "flake8", "train.py"]
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")


def test_bad_start_method_is_a_usage_error(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(UNGUARDED)
    out = flake8(script, "--dlw-start-method", "thread")
    assert out.returncode == 2
    assert "invalid choice" in out.stderr


def test_noqa(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(UNGUARDED.replace("lambda b: b)", "lambda b: b)  # noqa: DLW102"))
    out = flake8(script)
    assert [line.split()[1] for line in out.stdout.splitlines()] == ["DLW101"]


def test_registered_in_version_banner():
    out = subprocess.run([sys.executable, "-m", "flake8", "--version"],
                         capture_output=True, text=True)
    assert "flake8-dlworker" in out.stdout


def test_unguarded_call_into_sibling_module(tmp_path):
    (tmp_path / "trainlib.py").write_text(textwrap.dedent("""\
        from torch.utils.data import DataLoader

        def fit(data):
            for batch in DataLoader(data, num_workers=2):
                pass

        def main():
            fit(list(range(8)))
    """))
    (tmp_path / "run.py").write_text("from trainlib import main\n\nmain()\n")
    out = flake8(tmp_path / "run.py")
    assert out.stdout.split(": ", 1)[1].strip() == (
        "DLW101 unguarded module-level code starts worker processes (trainlib.main() -> "
        "fit() -> DataLoader iterated at line 4 in trainlib.py); "
        "move it under if __name__ == \"__main__\":")
    assert flake8(tmp_path / "trainlib.py").stdout == ""


def test_dataset_class_imported_from_sibling_module(tmp_path):
    (tmp_path / "data.py").write_text(textwrap.dedent("""\
        from torch.utils.data import Dataset

        class Squares(Dataset):
            def __init__(self):
                self.fn = lambda x: x * x

            def __len__(self):
                return 4

            def __getitem__(self, i):
                return self.fn(i)
    """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        from torch.utils.data import DataLoader
        from data import Squares

        if __name__ == "__main__":
            print(list(DataLoader(Squares(), num_workers=2)))
    """))
    out = flake8(tmp_path / "train.py")
    assert out.stdout.split(": ", 1)[1].strip() == (
        "DLW102 lambda passed as attribute 'fn' of Squares (data.py:5) is not picklable "
        "under spawn; define a module-level function")
    assert out.stdout.split(":")[1:3] == ["5", "27"]
    assert flake8(tmp_path / "data.py").stdout == ""


PINNED_MANY = textwrap.dedent("""\
    from torch.utils.data import DataLoader

    if __name__ == "__main__":
        loader = DataLoader(list(range(8)), num_workers=64, pin_memory=True)
        for batch in loader:
            pass
""")


def _codes(out):
    return [line.split()[1] for line in out.stdout.splitlines()]


def test_host_rules_off_unless_their_code_is_selected(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(PINNED_MANY)
    limits = ("--dlw-min-ram-gb", "100000", "--dlw-max-workers", "2")
    assert _codes(flake8(script, *limits)) == []  # --select DLW alone
    plain = [sys.executable, "-m", "flake8", "--isolated", *limits, str(script)]
    assert "DLW1" not in subprocess.run(plain, capture_output=True, text=True).stdout
    assert _codes(flake8(script, "--extend-select", "DLW105", *limits)) == ["DLW105"]
    assert _codes(flake8(script, "--extend-select", "DLW110", *limits)) == ["DLW110"]
    out = flake8(script, "--extend-select", "DLW105,DLW110", *limits)
    assert sorted(_codes(out)) == ["DLW105", "DLW110"]


def test_host_rules_silent_above_the_limits(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(PINNED_MANY)
    out = flake8(script, "--extend-select", "DLW105,DLW110",
                 "--dlw-min-ram-gb", "0.001", "--dlw-max-workers", "64")
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")


def test_host_options_from_config(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(PINNED_MANY)
    (tmp_path / "setup.cfg").write_text(
        "[flake8]\nselect = DLW105,DLW110\ndlw-min-ram-gb = 100000\ndlw-max-workers = 8\n")
    cmd = [sys.executable, "-m", "flake8", "train.py"]
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert out.stderr == ""
    assert [line.split(": ", 1)[1].split(" ")[0] for line in out.stdout.splitlines()] == [
        "DLW110", "DLW105"]
    assert "limit of 8 workers" in out.stdout
    assert "(below 100000 GB)" in out.stdout


def test_max_workers_defaults_to_the_usable_cpus(tmp_path):
    from flake8_dlworker.host import usable_cpus

    script = tmp_path / "train.py"
    cpus = usable_cpus()
    script.write_text(PINNED_MANY.replace("num_workers=64", "num_workers=%d" % (cpus + 1)))
    out = flake8(script, "--extend-select", "DLW110")
    assert "limit of %d workers (this host can use %d CPUs)" % (cpus, cpus) in out.stdout
    script.write_text(PINNED_MANY.replace("num_workers=64", "num_workers=%d" % cpus))
    assert flake8(script, "--extend-select", "DLW110").stdout == ""


def test_fork_keeps_the_rules_that_do_not_depend_on_pickling(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""\
        from torch.utils.data import DataLoader, IterableDataset


        class Numbers(IterableDataset):
            def __init__(self):
                self.log = open("log.txt", "w")

            def __iter__(self):
                return iter(range(8))


        loader = DataLoader(Numbers(), num_workers=2, collate_fn=lambda b: b)
        if __name__ == "__main__":
            print(list(DataLoader(Numbers(), persistent_workers=True)))
    """))
    spawn = sorted(set(_codes(flake8(script))))
    assert spawn == ["DLW102", "DLW106", "DLW108", "DLW109"]
    fork = sorted(set(_codes(flake8(script, "--dlw-start-method", "fork"))))
    assert fork == ["DLW106", "DLW109"]


def test_dataset_state_and_worker_code_in_a_sibling_module(tmp_path):
    """DLW107, DLW108, DLW109 and DLW111 through dataset classes imported from a module
    beside the script, reported at the loader's dataset argument with the other file."""
    (tmp_path / "data.py").write_text(textwrap.dedent("""\
        import numpy as np
        import torch
        from torch.utils.data import Dataset, IterableDataset


        class Lines(Dataset):
            def __init__(self, path):
                self.file = open(path)
                self.rng = np.random.default_rng(0)

            def __len__(self):
                return 4

            def __getitem__(self, i):
                return torch.tensor(float(i) + self.rng.normal()).cuda()


        class Stream(IterableDataset):
            def __iter__(self):
                return iter(range(4))
    """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        from torch.utils.data import DataLoader
        from data import Lines, Stream

        if __name__ == "__main__":
            print(list(DataLoader(Lines("data.txt"), num_workers=2)))
            print(list(DataLoader(Stream(), num_workers=2)))
    """))
    out = flake8(tmp_path / "train.py")
    found = [line.split(": ", 1)[1] for line in out.stdout.splitlines()]
    assert [line.split(":")[0:2] for line in out.stdout.replace(str(tmp_path), "").split(
        "\n") if line] == [["/train.py", "5"]] * 3 + [["/train.py", "6"]]
    assert ("DLW107 CUDA is used in worker-side code (.cuda() in Lines.__getitem__, "
            "data.py:15); return CPU tensors") in found[0]
    assert "DLW108 dataset attribute 'self.file' holds an open file, data.py:8," in found[1]
    assert "DLW111 dataset attribute 'self.rng' holds a random generator " \
           "(np.random.default_rng, data.py:9)" in found[2]
    assert found[3].startswith("DLW109 IterableDataset 'Stream' ignores get_worker_info()")
    # the dataset's own module names the handle and the generator where they are kept,
    # and the loader
    own = flake8(tmp_path / "data.py").stdout.replace(str(tmp_path), "").splitlines()
    assert own == ["/data.py:8:21: DLW108 dataset attribute 'self.file' holds an open file, "
                   "handed to DataLoader workers at train.py:5, which cannot be pickled into "
                   "workers or shared across fork; open it lazily in each worker (in "
                   "__getitem__ or worker_init_fn)",
                   "/data.py:9:20: DLW111 dataset attribute 'self.rng' holds a random "
                   "generator (np.random.default_rng, handed to DataLoader workers at "
                   "train.py:5) that every worker copies in the same state; create or reseed "
                   "it per worker from get_worker_info().seed"]
    # forked workers share an open file fine, and copy the generator all the same
    forked = flake8(tmp_path / "data.py", "--dlw-start-method", "fork").stdout
    assert forked.replace(str(tmp_path), "").splitlines() == own[1:]
    assert "DLW111" in flake8(tmp_path / "train.py", "--dlw-start-method", "fork").stdout
    fork = flake8(tmp_path / "train.py", "--dlw-start-method", "fork").stdout
    assert [line.split(": ", 1)[1].split()[0] for line in fork.splitlines()] == [
        "DLW107", "DLW111", "DLW109"]


# -- editors: flake8 reads the unsaved buffer on stdin and names it --stdin-display-name

EDITOR_FORMATS = {
    # the VS Code Flake8 extension's format: row, column, severity letter, code: text
    "vscode": ["--format=%(row)d,%(col)d,%(code).1s,%(code)s:%(text)s"],
    # ALE (vim) and most LSP wrappers: flake8's default path:row:col: code text
    "ale": ["--format=default"],
}


def test_editors_see_the_unsaved_buffer_through_stdin(tmp_path):
    """The buffer differs from the file on disk (the lambda was just typed): the finding
    comes from stdin, under the file's own name, and a sibling module beside that name
    is followed as for a saved file."""
    (tmp_path / "train.py").write_text("")  # on disk: still empty
    (tmp_path / "data.py").write_text(textwrap.dedent("""\
        from torch.utils.data import DataLoader


        def run():
            for batch in DataLoader(list(range(8)), num_workers=2):
                pass
    """))
    buffer = UNGUARDED + "from data import run\n\nrun()\n"
    seen = {}
    for editor, options in EDITOR_FORMATS.items():
        cmd = [sys.executable, "-m", "flake8", "--isolated", "--select", "DLW", *options,
               "--stdin-display-name", str(tmp_path / "train.py"), "-"]
        out = subprocess.run(cmd, input=buffer, capture_output=True, text=True, cwd=tmp_path)
        assert out.returncode == 1, out.stderr
        seen[editor] = out.stdout.splitlines()
    assert seen["vscode"][0] == ("3,63,D,DLW102:lambda passed as collate_fn is not picklable "
                                 "under spawn; define a module-level function")
    assert seen["ale"][0].startswith("%s:3:63: DLW102 " % (tmp_path / "train.py"))
    assert any(line.startswith("8,1,D,DLW101:") and "run()" in line for line in seen["vscode"])


HANDLES_AND_GETSTATE = textwrap.dedent("""\
    import threading

    from torch.utils.data import DataLoader, Dataset


    class Logged(Dataset):
        def __init__(self, path):
            self.log = open(path, "a")
            self.lock = threading.Lock()

        def __getstate__(self):
    {body}

        def __len__(self):
            return 8

        def __getitem__(self, i):
            return i


    if __name__ == "__main__":
        for batch in DataLoader(Logged("log.txt"), num_workers=2):
            pass
""")


@pytest.mark.parametrize("body, reported", [
    # drops one handle: the other one still breaks the worker
    ('state = self.__dict__.copy()\nstate["log"] = None\nreturn state', ["self.lock"]),
    ('state = dict(self.__dict__)\ndel state["lock"]\nreturn state', ["self.log"]),
    ('state = self.__dict__.copy()\nstate.pop("log", None)\nstate.pop("lock")\n'
     'return state', []),
    # builds its state its own way: it decides what travels
    ('return {"path": "log.txt"}', []),
    ('state = self.__dict__.copy()\nfor key in ("log", "lock"):\n    state[key] = None\n'
     'return state', []),
])
def test_a_getstate_leaves_out_what_it_drops_and_no_more(tmp_path, body, reported):
    script = tmp_path / "train.py"
    script.write_text(HANDLES_AND_GETSTATE.format(
        body=textwrap.indent(body, " " * 8)))
    out = flake8(script).stdout
    assert [line.split("'")[1] for line in out.splitlines()] == reported, out


GENERATOR_AND_INIT_FN = textwrap.dedent("""\
    import numpy as np
    from torch.utils.data import DataLoader, Dataset, get_worker_info


    def reseed(worker_id):
        get_worker_info().dataset.rng = np.random.default_rng(worker_id)


    class Noisy(Dataset):
        def __init__(self):
            self.rng = np.random.default_rng(0)

        def __len__(self):
            return 8

        def __getitem__(self, i):
            return self.rng.random()


    if __name__ == "__main__":
        for batch in DataLoader(Noisy(), num_workers=2, worker_init_fn={init_fn}):
            pass
""")


@pytest.mark.parametrize("init_fn, reported", [
    # seeds numpy's global generator: the dataset's own one is still copied as it was
    ("lambda w: np.random.seed(w)", True),
    # reaches the dataset's generator, or calls what may
    ("lambda w: reseed(w)", False),
    ("lambda w: get_worker_info().dataset.rng.bit_generator", False),
])
def test_a_worker_init_lambda_reseeds_only_what_it_calls(tmp_path, init_fn, reported):
    script = tmp_path / "train.py"
    script.write_text(GENERATOR_AND_INIT_FN.format(init_fn=init_fn))
    out = flake8(script, "--select", "DLW111").stdout
    assert ("DLW111" in out) == reported, out


def test_a_handle_behind_objects_the_dataset_keeps(tmp_path):
    """DLW108 at the line a class of the project keeps a handle on, for an object the
    dataset keeps, two objects deep at most (dataset -> store -> index -> handle): in
    the module of the holder when the dataset is handed to workers from elsewhere, at
    the loader with the holder's line otherwise; never inside a library's class, never
    for a holder that drops the handle from its pickled state, nor for a third level."""
    (tmp_path / "store.py").write_text(textwrap.dedent("""\
        import sqlite3
        import zipfile


        class Index:
            def __init__(self, path):
                self.file = open(path)


        class Deeper:
            def __init__(self, path):
                self.inner = Index(path)


        class Store:
            def __init__(self, path):
                self.index = Index(path)
                self.deeper = Deeper(path)
                self._connect(path)
                self.zip = zipfile.ZipFile(path)

            def _connect(self, path):
                self.conn = sqlite3.connect(path)

            def __getstate__(self):
                state = self.__dict__.copy()
                state["zip"] = None
                return state
    """))
    (tmp_path / "data.py").write_text(textwrap.dedent("""\
        import collections

        from torch.utils.data import Dataset

        from store import Store


        class Rows(Dataset):
            def __init__(self, path):
                self.store = Store(path)
                self.seen = collections.Counter(path)

            def __len__(self):
                return 8

            def __getitem__(self, i):
                return i
    """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        from torch.utils.data import DataLoader

        from data import Rows

        if __name__ == "__main__":
            print(list(DataLoader(Rows("rows.db"), num_workers=2)))
    """))
    out = flake8(tmp_path / "train.py").stdout.replace(str(tmp_path), "").splitlines()
    assert [line.split(" which ")[0] for line in out] == [
        "/train.py:6:27: DLW108 dataset attribute 'self.store.conn' holds a sqlite3 "
        "connection, store.py:23,",
        "/train.py:6:27: DLW108 dataset attribute 'self.store.index.file' holds an open "
        "file, store.py:7,"], out
    assert flake8(tmp_path / "data.py").stdout == ""  # the lines are in store.py
    fork = flake8(tmp_path / "train.py", "--dlw-start-method", "fork").stdout
    assert "self.store.conn" in fork and "self.store.index.file" not in fork


def test_a_handle_behind_an_object_is_reported_in_the_holders_module(tmp_path):
    """The reader and the dataset in one module, the loader in another: the dataset's
    module names the line that opens the handle (a helper method of the reader)."""
    (tmp_path / "data.py").write_text(textwrap.dedent("""\
        import zipfile

        from torch.utils.data import Dataset


        class Reader:
            def __init__(self, path):
                self._open(path)

            def _open(self, path):
                self.archive = zipfile.ZipFile(path)


        class Rows(Dataset):
            def __init__(self, path):
                self.reader = Reader(path)

            def __len__(self):
                return 8

            def __getitem__(self, i):
                return i
    """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        from torch.utils.data import DataLoader

        from data import Rows

        if __name__ == "__main__":
            print(list(DataLoader(Rows("x.zip"), num_workers=2)))
    """))
    own = flake8(tmp_path / "data.py").stdout.replace(str(tmp_path), "")
    assert own.startswith("/data.py:11:24: DLW108 dataset attribute 'self.reader.archive' "
                          "holds an open zip archive, handed to DataLoader workers at "
                          "train.py:6,"), own
