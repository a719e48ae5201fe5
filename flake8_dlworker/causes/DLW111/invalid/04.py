import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Noisy(Dataset):
    def __init__(self):
        self.rng = np.random.default_rng(0)

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return i + self.rng.normal()


def seed_worker(worker_id):
    np.random.seed(torch.initial_seed() % 2**32)


if __name__ == "__main__":
    loader = DataLoader(Noisy(), batch_size=4, num_workers=2, worker_init_fn=seed_worker)
    for batch in loader:
        print(batch)
