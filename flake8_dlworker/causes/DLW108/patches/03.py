import h5py
from torch.utils.data import DataLoader, Dataset


class Tokens(Dataset):
    def __init__(self, path):
        self.path = path
        self.h5 = h5py.File(path, "r")
        self.tokens = self.h5["tokens"]

    def __len__(self):
        return len(self.tokens)

    def __getitem__(self, i):
        return self.tokens[i]


def main(path):
    return DataLoader(Tokens(path), num_workers=2)
