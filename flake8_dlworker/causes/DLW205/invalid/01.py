import torch
from torch.utils.data import DataLoader, Dataset


class Ragged(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.zeros(3, 4 + i % 2)


if __name__ == "__main__":
    for batch in DataLoader(Ragged(), batch_size=2, num_workers=2):
        print(batch.shape)
