"""Clean: the loader's worker_init_fn seeds the worker and gives each worker's copy of the
dataset its own slice of the stream, through get_worker_info()."""
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class Numbers(IterableDataset):
    def __init__(self, n):
        self.start, self.end = 0, n

    def __iter__(self):
        for i in range(self.start, self.end):
            yield torch.tensor(i)


def seed_and_split(worker_id):
    seed = torch.initial_seed() % 2**32
    np.random.seed(seed)
    random.seed(seed)
    info = get_worker_info()
    share = (info.dataset.end - info.dataset.start) // info.num_workers
    info.dataset.start = info.dataset.start + worker_id * share
    info.dataset.end = info.dataset.start + share


if __name__ == "__main__":
    seen = []
    loader = DataLoader(Numbers(4), batch_size=2, num_workers=2,
                        worker_init_fn=seed_and_split)
    for batch in loader:
        seen.extend(batch.tolist())
    print("samples:", sorted(seen))
