"""DLW108: the dataset keeps a sqlite3 connection that a helper of the script makes
(``connect(path)`` returns ``sqlite3.connect(path)``) and counts its rows with it in
__init__."""
import os
import sqlite3
import tempfile

from torch.utils.data import DataLoader, Dataset


def connect(path):
    conn = sqlite3.connect(path)
    return conn


class Rows(Dataset):
    def __init__(self, path):
        self.db = connect(path)  # DLW108: 19
        self.count = self.db.execute("select count(*) from t").fetchone()[0]

    def __len__(self):
        return self.count

    def __getitem__(self, i):
        return self.db.execute("select v from t where id = ?", (i,)).fetchone()[0]


def make_db():
    path = os.path.join(tempfile.mkdtemp(), "rows.db")
    conn = sqlite3.connect(path)
    conn.execute("create table t (id integer, v real)")
    conn.executemany("insert into t values (?, ?)", [(i, i * 1.5) for i in range(6)])
    conn.commit()
    conn.close()
    return path


if __name__ == "__main__":
    for batch in DataLoader(Rows(make_db()), batch_size=3, num_workers=2):
        print(batch.tolist())
