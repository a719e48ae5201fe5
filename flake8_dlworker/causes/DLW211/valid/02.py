import torch.multiprocessing as mp
from torch.utils.data import DataLoader

from example_data import Squares


class Epochs(Squares):
    def __init__(self):
        super().__init__()
        self.epoch = mp.Value("i", 0)  # shared memory: every worker reads the same value

    def set_epoch(self, epoch):
        self.epoch.value = epoch

    def __getitem__(self, i):
        return 1000 * self.epoch.value + super().__getitem__(i)


if __name__ == "__main__":
    dataset = Epochs()
    loader = DataLoader(dataset, batch_size=4, num_workers=2, persistent_workers=True)
    for epoch in range(3):
        dataset.set_epoch(epoch)
        for batch in loader:
            print(epoch, batch)
