import numpy as np
from torch.utils.data import DataLoader, Dataset


class Paths(Dataset):
    def __init__(self):
        self.labels = np.arange(20_000_000, dtype=np.int64) % 10

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return int(self.labels[i])


if __name__ == "__main__":
    loader = DataLoader(Paths(), batch_size=256, num_workers=4)
    for batch in loader:
        pass
