"""DLW103: the function torch.multiprocessing.spawn runs in every rank is defined inside
main(); the ranks receive it by pickling, which needs a module-level name."""
import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, TensorDataset


def main():
    world_size = 2

    def main_worker(rank, world_size):
        loader = DataLoader(TensorDataset(torch.arange(8.0)), batch_size=4, num_workers=2)
        for batch in loader:
            print("rank", rank, "of", world_size, batch[0].tolist())

    mp.spawn(main_worker, args=(world_size,), nprocs=world_size)  # DLW103: 14


if __name__ == "__main__":
    main()
