import sqlite3

from torch.utils.data import DataLoader, Dataset


class Rows(Dataset):
    def __init__(self, path):
        self.path = path
        self.db = sqlite3.connect(path)

    def __len__(self):
        return 8

    def __getitem__(self, i):
        """One row."""
        return self.db.execute("select x from t where id = ?", (i,)).fetchone()[0]


if __name__ == "__main__":
    print(list(DataLoader(Rows("rows.db"), num_workers=2)))
