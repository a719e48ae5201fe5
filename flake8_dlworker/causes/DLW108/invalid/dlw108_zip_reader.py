"""DLW108: the dataset keeps a reader object whose helper method opened a zip archive
(and read its names in __init__): the probe finds ``dataset.reader.archive``, and the
line to change is where the reader assigns it."""
import io
import zipfile

import torch
from torch.utils.data import DataLoader, Dataset


def make_archive():
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for i in range(8):
            archive.writestr("%d.txt" % i, str(i * i))
    return data


class ShardReader:
    def __init__(self, data):
        self._open(data)
        self.names = sorted(self.archive.namelist())

    def _open(self, data):
        self.archive = zipfile.ZipFile(data)  # DLW108: 24

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
