import torch
from torch.utils.data import DataLoader, Dataset

scale = torch.tensor(2.0)


class Scaled(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return scale * i


loader = DataLoader(Scaled(), batch_size=4, num_workers=2)
print(list(loader))
