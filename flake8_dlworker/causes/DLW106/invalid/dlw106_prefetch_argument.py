"""DLW106: the worker count is the smaller of --num-workers (0 by default) and the CPU
count, and prefetch_factor comes from its own option (2 by default): without workers
DataLoader rejects any prefetch_factor."""
import argparse
import os

import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-workers", type=int, default=0)
    parser.add_argument("--prefetch-factor", type=int, default=2)
    args = parser.parse_args()
    loader = DataLoader(TensorDataset(torch.arange(16.0)), batch_size=4,
                        num_workers=min(args.num_workers, os.cpu_count()),
                        prefetch_factor=args.prefetch_factor)  # DLW106: 25
    for (batch,) in loader:
        print(batch.sum().item())


if __name__ == "__main__":
    main()
