"""Clean: the reader opens its zip archive on first use, in the process that reads it,
so that each worker opens its own (DLW108 trap: a reader object on the dataset)."""
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
        self.archive = None
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            self.names = sorted(archive.namelist())

    def read(self, name):
        if self.archive is None:
            self.archive = zipfile.ZipFile(io.BytesIO(self.data))
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
