import torch.multiprocessing as mp
from torch.utils.data import DataLoader

from example_data import Squares


def main_worker(rank, world_size):
    loader = DataLoader(Squares(), batch_size=4, num_workers=2)
    for batch in loader:
        print(rank, world_size, batch)


def main(world_size):
    mp.spawn(main_worker, args=(world_size,), nprocs=world_size)


if __name__ == "__main__":
    main(2)
