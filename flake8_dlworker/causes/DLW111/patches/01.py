import numpy as np
from torch.utils.data import DataLoader, Dataset


class Noisy(Dataset):
    def __init__(self, scale):
        self.scale = scale
        self.rng = np.random.default_rng(0)

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return float(self.rng.normal()) * self.scale + i


if __name__ == "__main__":
    for batch in DataLoader(Noisy(0.1), batch_size=4, num_workers=2):
        print(batch)
