# run in a container with Docker's default 64 MB /dev/shm
import torch
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __len__(self):
        return 10_000

    def __getitem__(self, i):
        return torch.zeros(3, 512, 512)


if __name__ == "__main__":
    loader = DataLoader(Images(), batch_size=64, num_workers=8)
    for batch in loader:
        pass
