import sqlite3
from torch.utils.data import DataLoader, Dataset, get_worker_info


class Rows(Dataset):
    db = None  # opened in each worker by open_db

    def __init__(self, path):
        self.path = path

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self.db.execute("select x from t where id = ?", (i,)).fetchone()[0]


def open_db(worker_id):
    dataset = get_worker_info().dataset
    dataset.db = sqlite3.connect(dataset.path)


if __name__ == "__main__":
    loader = DataLoader(Rows("rows.db"), batch_size=2, num_workers=2,
                        worker_init_fn=open_db)
    for batch in loader:
        print(batch)
