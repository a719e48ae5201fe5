import torch
from torch.utils.data import DataLoader, Dataset


def noise(shape):
    return torch.randn(shape, device="cuda")


class Noisy(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return noise((3,)) + i


if __name__ == "__main__":
    loader = DataLoader(Noisy(), batch_size=4, num_workers=2)
    for batch in loader:
        print(batch)
