"""DLW109 at run time: the loader's worker_init_fn is an object that seeds numpy and
random in each worker (the checker cannot tell what a callable object does, so it stays
silent); nothing splits the stream, so both workers yield every sample, and the script
prints what it really received. The doctor sees that no worker asked for its worker info
and that the worker_init_fn left the dataset as it was."""
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, IterableDataset


class Lines(IterableDataset):
    def __init__(self, rows):
        self.rows = rows

    def __iter__(self):
        for row in self.rows:
            yield torch.tensor(row)


class Seeder:
    def __init__(self, base):
        self.base = base

    def __call__(self, worker_id):
        np.random.seed(self.base + worker_id)
        random.seed(self.base + worker_id)


if __name__ == "__main__":
    seen = []
    loader = DataLoader(Lines(list(range(6))), batch_size=3, num_workers=2,  # doctor: DLW109
                        worker_init_fn=Seeder(7))
    for batch in loader:
        seen.extend(batch.tolist())
    print("samples:", sorted(seen))
