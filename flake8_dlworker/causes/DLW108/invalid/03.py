import sqlite3
from torch.utils.data import DataLoader, Dataset


class Rows(Dataset):
    def __init__(self, path):
        self.db = sqlite3.connect(path)

    def __len__(self):
        return self.db.execute("select count(*) from t").fetchone()[0]

    def __getitem__(self, i):
        return self.db.execute("select x from t where id = ?", (i,)).fetchone()[0]


if __name__ == "__main__":
    loader = DataLoader(Rows("rows.db"), batch_size=2, num_workers=2)
    for batch in loader:
        print(batch)
