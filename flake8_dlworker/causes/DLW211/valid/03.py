import torch
from torch.utils.data import DataLoader, Sampler

from example_data import Squares


class EpochShuffle(Sampler):
    """Lives in the main process: only the indices it yields reach the workers."""

    def __init__(self, size):
        self.size = size
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __len__(self):
        return self.size

    def __iter__(self):
        generator = torch.Generator().manual_seed(self.epoch)
        return iter(torch.randperm(self.size, generator=generator).tolist())


if __name__ == "__main__":
    dataset = Squares()
    sampler = EpochShuffle(len(dataset))
    loader = DataLoader(dataset, batch_size=4, sampler=sampler, num_workers=2,
                        persistent_workers=True)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for batch in loader:
            print(epoch, batch)
