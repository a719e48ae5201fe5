import numpy as np
from torch.utils.data import DataLoader, get_worker_info

from example_data import Squares


class Noisy(Squares):
    rng = None  # built in each worker by seed_worker

    def __getitem__(self, i):
        return super().__getitem__(i) + self.rng.normal()


def seed_worker(worker_id):
    info = get_worker_info()
    info.dataset.rng = np.random.default_rng(info.seed)


if __name__ == "__main__":
    loader = DataLoader(Noisy(), batch_size=4, num_workers=2, worker_init_fn=seed_worker)
    for batch in loader:
        print(batch)
