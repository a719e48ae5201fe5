import numpy as np
from torch.utils.data import DataLoader

from example_data import Squares


class Noisy(Squares):
    def __init__(self):
        super().__init__()
        self.rng = np.random.default_rng(0)

    def __getitem__(self, i):
        return super().__getitem__(i) + self.rng.normal()


if __name__ == "__main__":
    loader = DataLoader(Noisy(), batch_size=4, num_workers=2)
    for batch in loader:
        print(batch)
