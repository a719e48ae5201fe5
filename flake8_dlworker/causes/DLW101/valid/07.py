from torch.utils.data import Dataset


class DataLoader:
    """Not torch's: iterates in the calling process."""

    def __init__(self, dataset, num_workers=0):
        self.dataset = dataset
        self.num_workers = num_workers

    def __iter__(self):
        return (self.dataset[i] for i in range(len(self.dataset)))


class Squares(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return i * i


for item in DataLoader(Squares(), num_workers=2):
    print(item)
