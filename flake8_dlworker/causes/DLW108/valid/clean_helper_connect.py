"""Clean: the helper that opens the sqlite3 connection is called in each worker, on first
use, and the dataset keeps only the path until then."""
import sqlite3

from torch.utils.data import DataLoader, Dataset


def connect(path):
    db = sqlite3.connect(path)
    db.execute("create table t (id integer, x real)")
    db.executemany("insert into t values (?, ?)", [(i, i * 0.5) for i in range(8)])
    return db


def describe(path):
    return {"path": path, "rows": 8}


class Rows(Dataset):
    def __init__(self, path):
        self.info = describe(path)
        self.db = None

    def __len__(self):
        return self.info["rows"]

    def __getitem__(self, i):
        if self.db is None:
            self.db = connect(self.info["path"])
        return self.db.execute("select x from t where id = ?", (i,)).fetchone()[0]


if __name__ == "__main__":
    for batch in DataLoader(Rows(":memory:"), batch_size=4, num_workers=2):
        print(batch.sum().item())
