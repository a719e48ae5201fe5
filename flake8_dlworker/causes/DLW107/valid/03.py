import torch
from torch.utils.data import DataLoader, Dataset


class Table(Dataset):
    def __init__(self):
        self.data = torch.arange(8.0)

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self.data[i]

    def to_gpu(self):
        self.data = self.data.cuda()


if __name__ == "__main__":
    table = Table()
    loader = DataLoader(table, batch_size=4, num_workers=2)
    for batch in loader:
        print(batch)
    table.to_gpu()
