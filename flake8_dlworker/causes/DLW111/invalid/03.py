import numpy as np
from torch.utils.data import DataLoader, Dataset


class Crops(Dataset):
    def __init__(self):
        self.state = np.random.RandomState()

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self._crop(i)

    def _crop(self, i):
        return i + self.state.randint(0, 4)


if __name__ == "__main__":
    for batch in DataLoader(Crops(), batch_size=4, num_workers=4):
        print(batch)
