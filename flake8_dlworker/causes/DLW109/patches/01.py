import torch
from torch.utils.data import DataLoader, IterableDataset


class Numbers(IterableDataset):
    def __init__(self, n):
        self.n = n

    # the whole range, in order
    def __iter__(self):
        for i in range(self.n):
            yield torch.tensor(i)


if __name__ == "__main__":
    for batch in DataLoader(Numbers(4), batch_size=2, num_workers=2):
        print(batch)
