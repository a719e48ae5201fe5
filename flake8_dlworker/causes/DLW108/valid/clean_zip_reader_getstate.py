"""Clean: the reader opens its zip archive in a helper method its __init__ calls, and
leaves it out of its pickled state: each worker opens its own again when it unpickles
the dataset (DLW108 trap: a handle on a reader object the dataset keeps)."""
import io
import zipfile

import torch
from torch.utils.data import DataLoader, Dataset


def make_archive():
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for i in range(8):
            archive.writestr("%d.txt" % i, str(i * i))
    return data.getvalue()


class ShardReader:
    def __init__(self, data):
        self.data = data
        self._open()
        self.names = sorted(self.archive.namelist())

    def _open(self):
        self.archive = zipfile.ZipFile(io.BytesIO(self.data))

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("archive")
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._open()

    def read(self, name):
        return float(self.archive.read(name))


class Squares(Dataset):
    def __init__(self, data):
        self.reader = ShardReader(data)

    def __len__(self):
        return len(self.reader.names)

    def __getitem__(self, i):
        return torch.tensor(self.reader.read(self.reader.names[i]))


if __name__ == "__main__":
    for batch in DataLoader(Squares(make_archive()), batch_size=4, num_workers=2):
        print(batch.sum().item())
