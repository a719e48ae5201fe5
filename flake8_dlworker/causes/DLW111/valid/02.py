import numpy as np
from torch.utils.data import DataLoader, Dataset


class Noisy(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return i + np.random.normal()


if __name__ == "__main__":
    for batch in DataLoader(Noisy(), batch_size=4, num_workers=2):
        print(batch)
