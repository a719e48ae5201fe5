import torch
from torch.utils.data import DataLoader, Dataset


class OnGpu(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.full((3,), float(i)).cuda()


if __name__ == "__main__":
    # no workers: CUDA is used by this process alone
    for batch in DataLoader(OnGpu(8), batch_size=4, num_workers=0):
        print(batch)
