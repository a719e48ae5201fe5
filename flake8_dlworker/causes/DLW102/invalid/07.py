import torch.multiprocessing as mp
from torch.utils.data import DataLoader

from example_data import Squares


def run(rank, transform):
    loader = DataLoader(Squares(transform), batch_size=4, num_workers=2)
    for batch in loader:
        print(rank, batch)


if __name__ == "__main__":
    # every rank receives its args by pickling, as a worker does
    mp.spawn(run, args=(lambda x: x * 2,), nprocs=2)
