import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Noisy(Dataset):
    def __init__(self):
        self.np = np
        self.gen = torch.Generator().manual_seed(0)
        self.stream = (i * i for i in range(8))

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.rand(1, generator=self.gen) + self.np.float32(i)


if __name__ == "__main__":
    for batch in DataLoader(Noisy(), batch_size=4, num_workers=2):
        print(batch)
