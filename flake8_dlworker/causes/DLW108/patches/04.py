import sqlite3

from torch.utils.data import DataLoader, Dataset


class Rows(Dataset):
    def __init__(self):
        self.db = sqlite3.connect(":memory:")
        self.db.execute("create table t (id integer, x real)")

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self.db.execute("select x from t where id = ?", (i,)).fetchone()


def main():
    return DataLoader(Rows(), num_workers=2)
