from torch.utils.data import DataLoader, Dataset


class Index:
    def __init__(self, path):
        self._load(path)

    def _load(self, path):
        self.file = open(path, "rb")

    def row(self, i):
        self.file.seek(8 * i)
        return self.file.read(8)


class Rows(Dataset):
    def __init__(self, path):
        self.index = Index(path)

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self.index.row(i)


def main():
    return DataLoader(Rows("rows.bin"), num_workers=2)
