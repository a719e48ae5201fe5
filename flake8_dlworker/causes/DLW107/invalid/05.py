import torch
from torch.utils.data import DataLoader, Dataset


class Scaled(Dataset):
    def __init__(self, scale, transform):
        self.scale = scale
        self.transform = transform

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self.transform(i * self.scale)


class ToGpu:
    def __call__(self, x):
        return torch.tensor(x).cuda()


if __name__ == "__main__":
    loader = DataLoader(Scaled(0.5, transform=ToGpu()), batch_size=4, num_workers=2)
    for batch in loader:
        print(batch)
