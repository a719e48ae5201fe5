"""DLW109: the loader's worker_init_fn only seeds numpy and random in each worker; it never
splits the stream, so both workers yield every sample, and the script prints what it
really received."""
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, IterableDataset


class Numbers(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        for i in range(self.n):
            yield torch.tensor(i)


def seed_worker(worker_id):
    seed = torch.initial_seed() % 2**32
    np.random.seed(seed)
    random.seed(seed)


if __name__ == "__main__":
    seen = []
    loader = DataLoader(Numbers(4), batch_size=2, num_workers=2,  # DLW109: 25
                        worker_init_fn=seed_worker)
    for batch in loader:
        seen.extend(batch.tolist())
    print("samples:", sorted(seen))
