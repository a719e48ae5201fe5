import numpy as np
from torch.utils.data import DataLoader, Dataset, get_worker_info


class Noisy(Dataset):
    def __init__(self):
        self.rng = None

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return i + self.rng.normal()


def seed_worker(worker_id):
    info = get_worker_info()
    info.dataset.rng = np.random.default_rng(info.seed)


if __name__ == "__main__":
    loader = DataLoader(Noisy(), batch_size=4, num_workers=2, worker_init_fn=seed_worker)
    for batch in loader:
        print(batch)
