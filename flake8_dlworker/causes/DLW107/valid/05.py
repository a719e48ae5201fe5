import torch
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    """The device defaults to the CPU, and the loader below leaves it there."""

    def __init__(self, device="cpu"):
        self.device = device

    def __getitem__(self, i):
        return torch.full((3,), float(i)).to(self.device)

    def __len__(self):
        return 8


if __name__ == "__main__":
    # Images() keeps its default device: the workers never touch CUDA
    for batch in DataLoader(Images(), batch_size=4, num_workers=2):
        print(batch)
