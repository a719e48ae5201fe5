import torch.multiprocessing
from torch.utils.data import DataLoader

from example_data import Squares


def run(rank):
    print(rank)


if __name__ == "__main__":
    torch.multiprocessing.spawn(run, nprocs=2)
