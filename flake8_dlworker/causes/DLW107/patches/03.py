import torch
from torch.utils.data import DataLoader, Dataset


class Noise(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.randn(3, device="cuda", dtype=torch.float16).to("cuda", torch.float32)


def main():
    for batch in DataLoader(Noise(), num_workers=2):
        print(batch)
