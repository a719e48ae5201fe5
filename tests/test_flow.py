"""Values followed across functions, methods and modules, on patterns the fixtures do not
spell out: each case is a folder of real files, linted by one real flake8 run."""
import re
import subprocess
import sys
import textwrap

import pytest

LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>DLW\d{3}) (?P<text>.*)$")

#: case -> ({file name: source}, {(file, line, code)} expected)
CASES = {
    "sibling_factory_function": ({
        "data.py": """\
            from torch.utils.data import DataLoader

            def create_dataloader(opt):
                return DataLoader(list(range(8)), num_workers=opt)
        """,
        "train.py": """\
            import data

            def train(opt):
                for batch in data.create_dataloader(opt):
                    pass

            train(2)
        """}, {("train.py", 7, "DLW101")}),
    "sibling_star_import": ({
        "datasets.py": """\
            from torch.utils.data import Dataset

            class Squares(Dataset):
                def __init__(self):
                    self.fn = lambda x: x * x

                def __getitem__(self, i):
                    return self.fn(i)
        """,
        "train.py": """\
            from torch.utils.data import DataLoader
            from datasets import *

            if __name__ == "__main__":
                print(list(DataLoader(Squares(), num_workers=2)))
        """}, {("train.py", 5, "DLW102")}),
    "accelerate_prepare_passes_the_loader": ({
        "train.py": """\
            from accelerate import Accelerator
            from torch.utils.data import DataLoader

            def main():
                accelerator = Accelerator()
                model, loader = accelerator.prepare(object(), DataLoader([1, 2], num_workers=2))
                for batch in loader:
                    pass

            main()
        """}, {("train.py", 10, "DLW101")}),
    "self_loader_used_by_another_method": ({
        "train.py": """\
            from torch.utils.data import DataLoader

            class Runner:
                def setup(self):
                    self.loader = DataLoader([1, 2], num_workers=2)

                def run(self):
                    self.setup()
                    for batch in self.loader:
                        pass

            runner = Runner()
            runner.run()
        """}, {("train.py", 13, "DLW101")}),
    "dataset_keeps_function_from_set_transform": ({
        "train.py": """\
            import datasets
            from torch.utils.data import DataLoader

            def main():
                data = datasets.Dataset.from_dict({"x": [1, 2]})
                data.set_transform(lambda batch: batch)
                return list(DataLoader(data, num_workers=2))

            if __name__ == "__main__":
                main()
        """}, {("train.py", 6, "DLW102")}),
    "huggingface_map_is_not_pickled": ({
        "train.py": """\
            import datasets
            from torch.utils.data import DataLoader

            def main():
                def tokenize(row):
                    return row
                data = datasets.load_dataset("csv").map(tokenize, batched=True)
                data = data.filter(lambda row: True).with_format("torch")
                return list(DataLoader(data, num_workers=2))

            if __name__ == "__main__":
                main()
        """}, set()),
    "datapipe_map_keeps_its_function": ({
        "train.py": """\
            from torch.utils.data import DataLoader
            from torch.utils.data.datapipes.iter import IterableWrapper

            def main():
                pipe = IterableWrapper(range(8)).map(lambda x: x * 2)
                return list(DataLoader(pipe, num_workers=2))

            if __name__ == "__main__":
                main()
        """}, {("train.py", 5, "DLW102")}),
    "handles_taken_through_locals": ({
        "train.py": """\
            import h5py
            import lmdb
            from torch.utils.data import DataLoader, Dataset

            class Frames(Dataset):
                def __init__(self, path):
                    hf = h5py.File(path)
                    self.x = hf["x"]
                    self.y = hf.get("y")
                    env = lmdb.open(path)
                    self.txn = env.begin()

                def __getitem__(self, i):
                    return self.x[i], self.y[i], self.txn.get(b"k")

            if __name__ == "__main__":
                print(list(DataLoader(Frames("a.h5"), num_workers=2)))
        """}, {("train.py", 8, "DLW108"), ("train.py", 9, "DLW108"),
               ("train.py", 11, "DLW108")}),
    "fork_context_process_pickles_nothing": ({
        "train.py": """\
            import multiprocessing

            def main():
                ctx = multiprocessing.get_context("fork")
                ctx.Process(target=lambda: None).start()
                with ctx.Pool(2) as pool:
                    pool.map(lambda n: n, [1])

            if __name__ == "__main__":
                main()
        """}, set()),
    "kwargs_without_num_workers_may_carry_it": ({
        "train.py": """\
            from torch.utils.data import DataLoader

            def make(data, **options):
                return DataLoader(data, persistent_workers=True, **options)
        """}, set()),
    "argparse_default_with_workers_is_silent": ({
        "train.py": """\
            import argparse
            from torch.utils.data import DataLoader

            def main(args):
                return DataLoader([1], num_workers=args.workers, persistent_workers=True)

            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--workers", type=int, default=4)
                main(parser.parse_args())
        """}, set()),
    "parameter_default_is_followed": ({
        "train.py": """\
            from torch.utils.data import DataLoader

            def make(data, collate=lambda batch: batch):
                return DataLoader(data, num_workers=2, collate_fn=collate)
        """}, {("train.py", 3, "DLW102")}),
    "huggingface_trainer_collator_and_run": ({
        "train.py": """\
            from transformers import Trainer, TrainingArguments

            def main(model, data):
                args = TrainingArguments("out", dataloader_num_workers=2)
                trainer = Trainer(model=model, args=args, train_dataset=data,
                                  data_collator=lambda rows: rows)
                trainer.train()

            main(None, [1, 2])
        """}, {("train.py", 6, "DLW102"), ("train.py", 9, "DLW101")}),
    "huggingface_options_without_workers": ({
        "train.py": """\
            from transformers import Trainer, TrainingArguments

            def main(model, data):
                args = TrainingArguments("out", dataloader_persistent_workers=True)
                Trainer(model=model, args=args, train_dataset=data,
                        data_collator=lambda rows: rows).train()

            main(None, [1, 2])
        """}, {("train.py", 4, "DLW106")}),
    "lightning_fit_with_hooks": ({
        "train.py": """\
            import lightning as L
            from torch.utils.data import DataLoader

            class Data(L.LightningDataModule):
                def train_dataloader(self):
                    return DataLoader(list(range(8)), num_workers=2, collate_fn=lambda b: b)

            def main():
                trainer = L.Trainer(max_epochs=1)
                trainer.fit(object(), datamodule=Data())

            main()
        """}, {("train.py", 6, "DLW102"), ("train.py", 12, "DLW101")}),
    "lightning_fit_guarded": ({
        "train.py": """\
            import pytorch_lightning as pl
            from torch.utils.data import DataLoader

            class Model(pl.LightningModule):
                def train_dataloader(self):
                    return DataLoader(list(range(8)), num_workers=2)

            if __name__ == "__main__":
                pl.Trainer().fit(Model())
        """}, set()),
}


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    """One flake8 run over every case's folder: {(case, file, line, code)}."""
    root = tmp_path_factory.mktemp("flow")
    for case, (files, _expected) in CASES.items():
        folder = root / case
        folder.mkdir()
        for name, source in files.items():
            (folder / name).write_text(textwrap.dedent(source))
    cmd = [sys.executable, "-m", "flake8", "--isolated", "--select", "DLW", str(root)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode in (0, 1) and out.stderr == "", out.stderr
    found = set()
    for line in out.stdout.splitlines():
        match = LINE.match(line)
        assert match, line
        path = match["path"][len(str(root)) + 1:]
        case, name = path.split("/", 1)
        found.add((case, name, int(match["line"]), match["code"]))
    return found


@pytest.mark.parametrize("case", sorted(CASES))
def test_case_reports_what_it_expects(case, reported):
    got = {(name, line, code) for c, name, line, code in reported if c == case}
    assert got == CASES[case][1]
