"""Reach across a project's modules, with real flake8 on real files: a finding lands in
the file where the code must change (a handle kept by a dataset class is reported in
the class's own module when any module hands the class to a loader with workers), and
loaders, datasets and pipelines are followed through ``sys.path`` additions, module
hops, factories and conditional expressions. Each pattern has a clean twin."""
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>DLW\d{3}) (?P<text>.*)$")

H5_DATASET = """\
    import h5py
    from torch.utils.data import Dataset


    class Frames(Dataset):
        def __init__(self, path):
            self.file = h5py.File(path, "r")

        def __len__(self):
            return 4

        def __getitem__(self, i):
            return self.file["x"][i]


    class LazyFrames(Dataset):
        def __init__(self, path):
            self.path = path
            self.file = None

        def __len__(self):
            return 4

        def __getitem__(self, i):
            if self.file is None:
                self.file = h5py.File(self.path, "r")
            return self.file["x"][i]
"""


def write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def flake8(root, *options):
    """{(relative path, line, col, code)} and the messages of one flake8 run over the
    whole folder, from inside it."""
    out = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "DLW",
                          *options, "."], cwd=root, capture_output=True, text=True)
    assert out.returncode in (0, 1) and out.stderr == "", out.stderr
    found, texts = set(), {}
    for line in out.stdout.splitlines():
        match = LINE.match(line)
        assert match, line
        key = (match["path"][2:], int(match["line"]), int(match["col"]), match["code"])
        found.add(key)
        texts[key] = match["text"]
    return found, texts


def test_a_handle_is_reported_in_the_dataset_module_a_script_imports(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "data/__init__.py": "",
        "data/frames.py": H5_DATASET,
        "train.py": """\
            from torch.utils.data import DataLoader
            from data.frames import Frames, LazyFrames

            if __name__ == "__main__":
                for batch in DataLoader(Frames("x.h5"), num_workers=4 if True else 0):
                    print(batch)
                for batch in DataLoader(LazyFrames("x.h5"), num_workers=4):
                    print(batch)
        """})
    found, texts = flake8(tmp_path)
    assert found == {("data/frames.py", 7, 21, "DLW108"), ("train.py", 5, 29, "DLW108")}
    assert "holds an h5py.File, handed to DataLoader workers at ../train.py:5," in \
        texts[("data/frames.py", 7, 21, "DLW108")]


def test_no_handle_is_reported_for_a_class_no_module_gives_to_workers(tmp_path):
    """Clean twins: the class is read without workers, through a loader that only forks
    (an h5py file is still unsafe there: reported), or by no loader at all."""
    write(tmp_path, {
        "pyproject.toml": "",
        "data/__init__.py": "",
        "data/frames.py": H5_DATASET,
        "data/logs.py": """\
            from torch.utils.data import Dataset


            class Lines(Dataset):
                def __init__(self, path):
                    self.file = open(path)

                def __len__(self):
                    return 4

                def __getitem__(self, i):
                    return self.file.readline()
        """,
        "evaluate.py": """\
            from torch.utils.data import DataLoader
            from data.frames import Frames
            from data.logs import Lines

            if __name__ == "__main__":
                print(list(DataLoader(Frames("x.h5"), num_workers=0)))
                print(list(DataLoader(Lines("x.txt"), num_workers=2,
                                      multiprocessing_context="fork")))
        """})
    assert flake8(tmp_path)[0] == set()


def test_a_handle_is_reported_where_the_folder_a_script_puts_on_sys_path_holds_it(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "lib/frames.py": H5_DATASET,
        "scripts/train.py": """\
            import os
            import sys

            sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
            from torch.utils.data import DataLoader  # noqa: E402
            from frames import Frames  # noqa: E402

            if __name__ == "__main__":
                loader = DataLoader(Frames("x.h5"), num_workers=2)
                print(list(loader))
        """,
        "scripts/evaluate.py": """\
            import sys
            from pathlib import Path

            sys.path.append(str(Path(__file__).resolve().parent.parent / "lib"))
            from torch.utils.data import DataLoader  # noqa: E402
            from frames import LazyFrames  # noqa: E402

            if __name__ == "__main__":
                print(list(DataLoader(LazyFrames("x.h5"), num_workers=2)))
        """})
    assert flake8(tmp_path)[0] == {("lib/frames.py", 7, 21, "DLW108"),
                                   ("scripts/train.py", 9, 25, "DLW108")}


def test_an_unrelated_folder_on_sys_path_is_not_followed(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "lib/frames.py": H5_DATASET,
        "train.py": """\
            import sys

            sys.path.insert(0, sys.argv[1])
            from torch.utils.data import DataLoader  # noqa: E402
            from frames import Frames  # noqa: E402

            if __name__ == "__main__":
                print(list(DataLoader(Frames("x.h5"), num_workers=2)))
        """})
    assert flake8(tmp_path)[0] == set()


LOADER_MODULES = {
    "data/__init__.py": "",
    "data/data_loader.py": """\
        def CreateDataLoader(opt):
            from data.custom_loader import CustomDatasetDataLoader

            data_loader = CustomDatasetDataLoader()
            data_loader.initialize(opt)
            return data_loader
    """,
    "data/custom_loader.py": """\
        import torch.utils.data


        class CustomDatasetDataLoader:
            def initialize(self, opt):
                self.dataset = list(range(8))
                self.dataloader = torch.utils.data.DataLoader(
                    self.dataset, batch_size=2, num_workers=int(opt.threads))

            def load_data(self):
                return self.dataloader
    """}


def test_a_loader_built_two_modules_away_is_followed_to_the_unguarded_loop(tmp_path):
    write(tmp_path, dict(LOADER_MODULES, **{"train.py": """\
        from data.data_loader import CreateDataLoader
        from options import opt

        data_loader = CreateDataLoader(opt)
        dataset = data_loader.load_data()
        for i, data in enumerate(dataset):
            print(i)
    """, "test.py": """\
        from data.data_loader import CreateDataLoader
        from options import opt

        if __name__ == "__main__":
            for i, data in enumerate(CreateDataLoader(opt).load_data()):
                print(i)
    """}))
    assert flake8(tmp_path)[0] == {("train.py", 6, 1, "DLW101")}


def test_a_loader_chosen_by_a_conditional_expression(tmp_path):
    write(tmp_path, {"train.py": """\
        import torch
        from torch.utils.data import DataLoader, TensorDataset

        data = TensorDataset(torch.arange(8.0))
        training = True
        loader = data if not training else DataLoader(data, num_workers=2)
        for batch in enumerate(loader if training else data):
            print(batch)
    """, "clean.py": """\
        import torch
        from torch.utils.data import DataLoader, TensorDataset

        data = TensorDataset(torch.arange(8.0))
        training = True
        loader = data if not training else DataLoader(data, num_workers=0)
        for batch in enumerate(loader if training else data):
            print(batch)
    """})
    assert flake8(tmp_path)[0] == {("train.py", 7, 1, "DLW101")}


FACTORIES = {
    "factories.py": """\
        import webdataset as wds
        from torch.utils.data import Dataset


        def make_dataset(n):
            class Squares(Dataset):
                def __len__(self):
                    return n

                def __getitem__(self, i):
                    return i * i

            return Squares


        def pipeline(urls):
            stages = [wds.SimpleShardList(urls), wds.tarfile_to_samples(),
                      wds.map(lambda sample: sample["x"])]
            return wds.DataPipeline(*stages)


        def chained(urls):
            return wds.WebDataset(urls).map(lambda sample: sample["x"])


        def clean_pipeline(urls):
            return wds.DataPipeline(wds.SimpleShardList(urls), wds.map(first))


        def first(sample):
            return sample["x"]
    """}


def test_factories_and_pipelines_of_a_module_beside_are_followed(tmp_path):
    write(tmp_path, dict(FACTORIES, **{"train.py": """\
        from torch.utils.data import DataLoader
        from factories import chained, make_dataset, pipeline

        if __name__ == "__main__":
            print(list(DataLoader(make_dataset(8)(), num_workers=2)))
            print(list(DataLoader(pipeline("a.tar"), num_workers=2)))
            print(list(DataLoader(chained("a.tar"), num_workers=2)))
    """}))
    found, texts = flake8(tmp_path)
    assert found == {("train.py", 5, 27, "DLW103"), ("train.py", 6, 27, "DLW102"),
                     ("train.py", 7, 27, "DLW102"), ("factories.py", 6, 5, "DLW103")}
    assert "class 'Squares' defined inside make_dataset() reaches a worker as part of the " \
        "dataset (factories.py:6)" in texts[("train.py", 5, 27, "DLW103")]
    assert texts[("train.py", 6, 27, "DLW102")].startswith(
        "lambda passed as part of the dataset (factories.py:18) ")


def test_factories_and_pipelines_of_a_module_beside_clean_twins(tmp_path):
    """A module-level function in the pipeline, and the factory's class read without
    workers."""
    write(tmp_path, dict(FACTORIES, **{"train.py": """\
        from torch.utils.data import DataLoader
        from factories import clean_pipeline, make_dataset

        if __name__ == "__main__":
            print(list(DataLoader(make_dataset(8)(), num_workers=0)))
            print(list(DataLoader(clean_pipeline("a.tar"), num_workers=2)))
    """}))
    assert flake8(tmp_path)[0] == set()


def test_a_factory_returning_a_nested_dataset_class_in_one_module(tmp_path):
    write(tmp_path, {"train.py": """\
        from torch.utils.data import DataLoader, Dataset


        def get_dataset(n):
            class Squares(Dataset):
                def __len__(self):
                    return n

                def __getitem__(self, i):
                    return i * i

            return Squares()


        if __name__ == "__main__":
            print(list(DataLoader(get_dataset(8), num_workers=2)))
            print(list(DataLoader(get_dataset(8), num_workers=0)))
    """})
    assert flake8(tmp_path)[0] == {("train.py", 16, 27, "DLW103")}


def test_a_folder_without_a_project_marker_is_read_into_its_packages_only(tmp_path):
    """No ``.git`` or ``pyproject.toml``: the dataset module's package is read from the
    folder that holds it, and a folder of other scripts beside it is not walked."""
    train = """\
        from torch.utils.data import DataLoader
        from data.frames import Frames

        if __name__ == "__main__":
            print(list(DataLoader(Frames("x.h5"), num_workers=2)))
    """
    write(tmp_path, {"data/__init__.py": "", "data/frames.py": H5_DATASET,
                     "train.py": train, "other/train.py": train})
    assert flake8(tmp_path / "data")[0] == {("frames.py", 7, 21, "DLW108")}
    (tmp_path / "train.py").unlink()
    assert flake8(tmp_path / "data")[0] == set()


RELATIVE_PACKAGE = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/data/__init__.py": "",
    "pkg/data/frames.py": H5_DATASET + """

    def build(path):
        frames = Frames(path)
        return frames


    def build_lazy(path):
        return LazyFrames(path)
    """,
    "pkg/train/__init__.py": "",
}


def test_relative_imports_are_followed_in_a_package(tmp_path):
    """``from ..data.frames import Frames``, ``from ..data import frames`` and a factory
    named through them: the handle is reported at each loader and, once, in the dataset
    module at the line that keeps it."""
    write(tmp_path, dict(RELATIVE_PACKAGE, **{"pkg/train/loop.py": """\
        from torch.utils.data import DataLoader

        from ..data import frames
        from ..data.frames import Frames, LazyFrames


        def run():
            print(list(DataLoader(Frames("x.h5"), num_workers=2)))
            print(list(DataLoader(frames.build("x.h5"), num_workers=2)))
            print(list(DataLoader(LazyFrames("x.h5"), num_workers=2)))
            print(list(DataLoader(frames.build_lazy("x.h5"), num_workers=2)))
    """}))
    found, texts = flake8(tmp_path)
    assert found == {("pkg/train/loop.py", 8, 27, "DLW108"),
                     ("pkg/train/loop.py", 9, 27, "DLW108"),
                     ("pkg/data/frames.py", 7, 21, "DLW108")}
    assert "an h5py.File, handed to DataLoader workers at ../train/loop.py:8" in texts[
        ("pkg/data/frames.py", 7, 21, "DLW108")]


def test_a_package_module_found_by_one_dot_and_a_star(tmp_path):
    write(tmp_path, dict(RELATIVE_PACKAGE, **{
        "pkg/data/run.py": """\
            from torch.utils.data import DataLoader

            from . import frames
            from .frames import *  # noqa: F403


            def run():
                print(list(DataLoader(frames.Frames("x.h5"), num_workers=2)))
                print(list(DataLoader(build("x.h5"), num_workers=2)))  # noqa: F405
        """}))
    assert flake8(tmp_path)[0] == {("pkg/data/run.py", 8, 27, "DLW108"),
                                   ("pkg/data/run.py", 9, 27, "DLW108"),
                                   ("pkg/data/frames.py", 7, 21, "DLW108")}


def test_relative_imports_clean_twins(tmp_path):
    """The classes reached through relative imports that open their file in each worker,
    or go to a loader without workers; an import above the top package is no module."""
    write(tmp_path, dict(RELATIVE_PACKAGE, **{"pkg/train/loop.py": """\
        from torch.utils.data import DataLoader

        from ..data import frames
        from ...elsewhere import Frames as Outside
        from ..data.frames import Frames, LazyFrames


        def run():
            print(list(DataLoader(Frames("x.h5"), num_workers=0)))
            print(list(DataLoader(frames.build("x.h5"), num_workers=0)))
            print(list(DataLoader(LazyFrames("x.h5"), num_workers=2)))
            print(list(DataLoader(frames.build_lazy("x.h5"), num_workers=2)))
            print(list(DataLoader(Outside("x.h5"), num_workers=2)))
    """}))
    assert flake8(tmp_path)[0] == set()


def test_relative_names_inside_a_package_named_torch_are_not_torchs(tmp_path):
    """Inside torch's own sources ``from .data import DataLoader`` is the library's
    private business: a name a relative import binds never reads as a library's."""
    write(tmp_path, {
        "pyproject.toml": "",
        "torch/__init__.py": "",
        "torch/utils/__init__.py": "",
        "torch/utils/data.py": """\
            class DataLoader:
                def __init__(self, dataset, num_workers=0, collate_fn=None):
                    self.dataset = dataset
        """,
        "torch/utils/use.py": """\
            from .data import DataLoader


            def run(dataset):
                return DataLoader(dataset, num_workers=2, collate_fn=lambda b: b)
        """})
    assert flake8(tmp_path)[0] == set()


def test_a_dataset_a_function_returns_is_the_class_it_builds(tmp_path):
    """``DataLoader(build(path))``: the function of a module beside the script, or of the
    script itself, returns an instance of a class that keeps a handle."""
    write(tmp_path, {
        "pyproject.toml": "",
        "frames.py": H5_DATASET + """

    def build(path):
        return Frames(path)


    def build_lazy(path):
        return LazyFrames(path)
    """,
        "train.py": """\
            from torch.utils.data import DataLoader

            import frames
            from frames import Frames


            def local(path):
                dataset = Frames(path)
                return dataset


            if __name__ == "__main__":
                print(list(DataLoader(frames.build("x.h5"), num_workers=2)))
                print(list(DataLoader(local("x.h5"), num_workers=2)))
                print(list(DataLoader(frames.build_lazy("x.h5"), num_workers=2)))
                print(list(DataLoader(local("x.h5"), num_workers=0)))
        """})
    assert flake8(tmp_path)[0] == {("train.py", 13, 27, "DLW108"),
                                   ("train.py", 14, 27, "DLW108"),
                                   ("frames.py", 7, 21, "DLW108")}


def test_an_unguarded_call_to_a_function_a_relative_import_names(tmp_path):
    """``python -m app.run``: its module is re-run in every spawned worker, and the
    function its relative import names builds a loader with workers."""
    loop = ("\n\n\ndef main():\n"
            "    for (batch,) in {}CreateDataLoader(4).load_data():\n"
            "        print(batch.sum().item())\n\n\n{}\n")
    write(tmp_path, {
        "pyproject.toml": "", "app/__init__.py": "",
        "app/loaders_beside.py": (ROOT / "fixtures" / "loaders_beside.py").read_text(),
        "app/run.py": "from .loaders_beside import CreateDataLoader" + loop.format("", "main()"),
        "app/run_module.py": "from . import loaders_beside" + loop.format(
            "loaders_beside.", "main()"),
        "app/guarded.py": "from . import loaders_beside" + loop.format(
            "loaders_beside.", 'if __name__ == "__main__":\n    main()'),
    })
    found, _texts = flake8(tmp_path)
    assert found == {("app/run.py", 9, 1, "DLW101"), ("app/run_module.py", 9, 1, "DLW101")}


NOISY = """\
    import numpy as np
    from torch.utils.data import Dataset


    class Noisy(Dataset):
        def __init__(self):
            self.rng = np.random.default_rng(0)

        def __len__(self):
            return 8

        def __getitem__(self, i):
            return self.rng.integers(1 << 30)


    def build():
        return Noisy()
"""


def test_a_generator_is_reported_in_the_dataset_module_a_loader_draws_from(tmp_path):
    """DLW111 in the class's own module for a loader with workers and no
    ``worker_init_fn`` (one may reseed the copy), reached by name or through a factory."""
    write(tmp_path, {"pyproject.toml": "", "noisy.py": NOISY, "train.py": """\
        from torch.utils.data import DataLoader
        from noisy import build

        if __name__ == "__main__":
            print(list(DataLoader(build(), num_workers=2)))
    """})
    found, texts = flake8(tmp_path)
    assert found == {("train.py", 5, 27, "DLW111"), ("noisy.py", 7, 20, "DLW111")}
    assert "(np.random.default_rng, handed to DataLoader workers at train.py:5)" in texts[
        ("noisy.py", 7, 20, "DLW111")]


def test_a_generator_is_not_reported_where_each_loader_may_reseed_it(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "noisy.py": NOISY, "train.py": """\
        from torch.utils.data import DataLoader
        from noisy import Noisy, build
        from seeding import reseed

        if __name__ == "__main__":
            print(list(DataLoader(build(), num_workers=2, worker_init_fn=reseed)))
            print(list(DataLoader(Noisy(), num_workers=0)))
    """})
    assert flake8(tmp_path)[0] == set()


def test_a_class_a_factory_defines_is_reported_in_the_factory_module(tmp_path):
    """DLW103 at the class a factory of another module defines and returns (or returns
    an instance of), when a loader with spawned workers gets it; and at the loader."""
    write(tmp_path, dict(FACTORIES, **{"train.py": """\
        from torch.utils.data import DataLoader
        from factories import make_dataset

        if __name__ == "__main__":
            print(list(DataLoader(make_dataset(8)(), num_workers=2)))
    """}))
    found, texts = flake8(tmp_path)
    assert found == {("train.py", 5, 27, "DLW103"), ("factories.py", 6, 5, "DLW103")}
    assert "as part of the dataset (handed to DataLoader workers at train.py:5)" in texts[
        ("factories.py", 6, 5, "DLW103")]
    (tmp_path / "train.py").write_text((tmp_path / "train.py").read_text().replace(
        "num_workers=2", 'num_workers=2, multiprocessing_context="fork"'))
    assert flake8(tmp_path)[0] == set()


STAR_SCRIPT = """\
    from models import *


    class Lines(Dataset):
        def __init__(self):
            self.f = open(__file__)

        def __len__(self):
            return 4

        def __getitem__(self, i):
            return i


    if __name__ == "__main__":
        for batch in DataLoader(Lines(), num_workers=2):
            print(batch)
    """


@pytest.mark.parametrize("models, found", [
    ("import torch\nfrom torch.utils.data import DataLoader, Dataset\n", True),
    ("from torch.utils.data import DataLoader, Dataset\n__all__ = ['Dataset', 'DataLoader']\n",
     True),
    # __all__ hands on only what it names: DataLoader is not torch's here
    ("from torch.utils.data import DataLoader, Dataset\n__all__ = ['Dataset']\n"
     "def DataLoader(*args, **kwargs):\n    return []\n", False),
    ("from torch.utils.data import DataLoader as _DataLoader, Dataset\n"
     "def DataLoader(*args, **kwargs):\n    return []\n", False)])
def test_torch_reached_through_a_star_import_of_a_project_module(tmp_path, models, found):
    """``from models import *`` where ``models`` imports torch's DataLoader and Dataset:
    the script's names are torch's, and its dataset's handle is DLW108; not where the
    module hands on a DataLoader of its own."""
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text(models)
    (tmp_path / "train.py").write_text(textwrap.dedent(STAR_SCRIPT))
    codes = {(path, line, code) for path, line, _col, code in flake8(tmp_path)[0]}
    assert codes == ({("train.py", 6, "DLW108")} if found else set()), codes
