from torch.utils.data import DataLoader

from example_data import Squares


def main():
    return DataLoader(Squares(transform=lambda x: x * 2), num_workers=2)
