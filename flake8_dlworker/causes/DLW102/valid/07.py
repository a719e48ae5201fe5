import functools

import torch.multiprocessing as mp
from torch.utils.data import DataLoader

from example_data import Squares


def scale(x, factor):
    return x * factor


def run(rank, transform):
    loader = DataLoader(Squares(transform), batch_size=4, num_workers=2)
    for batch in loader:
        print(rank, batch)


if __name__ == "__main__":
    mp.spawn(run, args=(functools.partial(scale, factor=2),), nprocs=2)
