"""DLW108: a helper function of the script opens the sqlite3 connection, and the dataset
keeps what it returns."""
import sqlite3

from torch.utils.data import DataLoader, Dataset


def connect(path):
    db = sqlite3.connect(path)
    db.execute("create table t (id integer, x real)")
    db.executemany("insert into t values (?, ?)", [(i, i * 0.5) for i in range(8)])
    return db


class Rows(Dataset):
    def __init__(self, path):
        self.db = connect(path)  # DLW108: 19

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self.db.execute("select x from t where id = ?", (i,)).fetchone()[0]


if __name__ == "__main__":
    for batch in DataLoader(Rows(":memory:"), batch_size=4, num_workers=2):
        print(batch.sum().item())
