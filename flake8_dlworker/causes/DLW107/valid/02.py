import torch
from torch.utils.data import DataLoader, Dataset


class OnGpu(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.full((3,), float(i)).cuda()


if __name__ == "__main__":
    loader = DataLoader(OnGpu(), batch_size=4, num_workers=0)
    for batch in loader:
        print(batch)
