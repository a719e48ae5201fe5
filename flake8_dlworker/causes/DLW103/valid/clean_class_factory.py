"""Clean: the factory returns an instance of a module-level dataset class, and a nested
function's result (not the function) is what the dataset is built from."""
import torch
from torch.utils.data import DataLoader, Dataset


class Scaled(Dataset):
    def __init__(self, scale):
        self.scale = scale

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.tensor(float(i) * self.scale)


def dataset_for(scale):
    return Scaled(scale)


def scale_reader(default):
    def read():
        return default
    return read


if __name__ == "__main__":
    read_scale = scale_reader(2.0)
    for batch in DataLoader(dataset_for(read_scale()), batch_size=4, num_workers=2):
        print(batch.sum().item())
