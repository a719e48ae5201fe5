import numpy as np
from torch.utils.data import DataLoader, get_worker_info

from example_data import Squares


class Noisy(Squares):
    def __init__(self):
        super().__init__()
        self.rng = np.random.default_rng(0)
        self.reseeded = False

    def __getitem__(self, i):
        info = get_worker_info()
        if info is not None and not self.reseeded:
            self.rng = np.random.default_rng(info.seed)
            self.reseeded = True
        return super().__getitem__(i) + self.rng.normal()


if __name__ == "__main__":
    for batch in DataLoader(Noisy(), batch_size=4, num_workers=2):
        print(batch)
