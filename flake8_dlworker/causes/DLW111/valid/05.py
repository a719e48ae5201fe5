import numpy as np
from torch.utils.data import DataLoader

from example_data import Squares


class Noisy(Squares):
    def __init__(self, seed):
        super().__init__()
        self.rng = np.random.default_rng(seed)

    def __getitem__(self, i):
        return super().__getitem__(i) + self.rng.normal()


if __name__ == "__main__":
    for batch in DataLoader(Noisy(seed=0), batch_size=4):  # no workers: one generator
        print(batch)
