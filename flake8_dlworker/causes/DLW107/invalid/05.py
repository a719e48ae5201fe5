import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __init__(self, transform=None):
        self.transform = transform

    def __len__(self):
        return 8

    def __getitem__(self, i):
        x = float(i * i)
        return self.transform(x) if self.transform else x


class ToGpu:
    def __call__(self, x):
        return torch.tensor(x).cuda()


if __name__ == "__main__":
    loader = DataLoader(Squares(transform=ToGpu()), batch_size=4, num_workers=2)
    for batch in loader:
        print(batch)
