"""DLW102: torch.multiprocessing.spawn pickles its args into every rank it starts, as a
DataLoader pickles its collate_fn into every worker; a lambda among them cannot go."""
import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, TensorDataset


def run(rank, world_size, collate):
    loader = DataLoader(TensorDataset(torch.arange(8.0)), batch_size=4, collate_fn=collate)
    for batch in loader:
        print("rank", rank, "of", world_size, batch)


def main():
    world_size = 2
    mp.spawn(run, args=(world_size, lambda batch: torch.stack([x[0] for x in batch])),  # DLW102: 37
             nprocs=world_size)


if __name__ == "__main__":
    main()
