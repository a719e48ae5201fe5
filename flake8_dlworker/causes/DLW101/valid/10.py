import torch.multiprocessing
from torch.utils.data import DataLoader

from example_data import Squares


def run(rank):
    loader = DataLoader(Squares(), batch_size=4, num_workers=2)
    for batch in loader:
        print(rank, batch)


if __name__ == "__main__":
    torch.multiprocessing.spawn(run, nprocs=2)
