import numpy as np
from torch.utils.data import DataLoader, Dataset, get_worker_info


class Noisy(Dataset):
    def __init__(self):
        self.rng = np.random.default_rng(0)

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        if info is not None and not getattr(self, "reseeded", False):
            self.rng = np.random.default_rng(info.seed)
            self.reseeded = True
        return i + self.rng.normal()


if __name__ == "__main__":
    for batch in DataLoader(Noisy(), batch_size=4, num_workers=2):
        print(batch)
