"""Clean: torch.multiprocessing.spawn given a module-level function, and args that pickle
by name (a functools.partial of a module-level function); each rank loads with a
worker (one each: two ranks share the CPUs of one node)."""
import functools

import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, TensorDataset


def stack_scaled(batch, factor):
    return torch.stack([x[0] for x in batch]) * factor


def run(rank, world_size, collate):
    loader = DataLoader(TensorDataset(torch.arange(8.0)), batch_size=4, num_workers=1,
                        collate_fn=collate)
    for batch in loader:
        print("rank", rank, "of", world_size, batch.tolist())


def main():
    world_size = 2
    mp.spawn(run, args=(world_size, functools.partial(stack_scaled, factor=2.0)),
             nprocs=world_size)


if __name__ == "__main__":
    main()
