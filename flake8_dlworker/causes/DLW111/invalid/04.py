import numpy as np
import torch
from torch.utils.data import DataLoader

from example_data import Squares


class Jittered(Squares):
    def __init__(self):
        super().__init__()
        self.rng = np.random.default_rng(0)

    def __getitem__(self, i):
        return self.jitter(super().__getitem__(i))

    def jitter(self, x):
        return x + self.rng.normal()


def seed_worker(worker_id):
    np.random.seed(torch.initial_seed() % 2**32)


if __name__ == "__main__":
    loader = DataLoader(Jittered(), batch_size=4, num_workers=2, worker_init_fn=seed_worker)
    for batch in loader:
        print(batch)
