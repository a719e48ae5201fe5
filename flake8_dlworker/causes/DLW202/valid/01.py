# run with: docker run --shm-size=8g ...
import torch
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __len__(self):
        return 10_000

    def __getitem__(self, i):
        return torch.zeros(3, 512, 512)


if __name__ == "__main__":
    loader = DataLoader(Images(), batch_size=16, num_workers=2)
    for batch in loader:
        pass
