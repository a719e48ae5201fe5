"""Clean: the loader's worker_init_fn is an object that seeds numpy and random in each
worker, and the dataset's __iter__ takes only its worker's share of the rows, through
get_worker_info()."""
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class Lines(IterableDataset):
    def __init__(self, rows):
        self.rows = rows

    def __iter__(self):
        info = get_worker_info()
        share = self.rows if info is None else self.rows[info.id::info.num_workers]
        for row in share:
            yield torch.tensor(row)


class Seeder:
    def __init__(self, base):
        self.base = base

    def __call__(self, worker_id):
        np.random.seed(self.base + worker_id)
        random.seed(self.base + worker_id)


if __name__ == "__main__":
    seen = []
    loader = DataLoader(Lines(list(range(6))), batch_size=3, num_workers=2,
                        worker_init_fn=Seeder(7))
    for batch in loader:
        seen.extend(batch.tolist())
    print("samples:", sorted(seen))
