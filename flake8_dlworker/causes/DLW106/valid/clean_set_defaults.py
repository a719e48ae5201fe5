"""Clean: the parser's set_defaults gives the loader two workers, so persistent_workers
holds."""
import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--loader-workers", dest="workers", type=int, default=0)
    parser.set_defaults(workers=2)
    return parser.parse_args()


def main():
    args = parse_args()
    loader = DataLoader(TensorDataset(torch.arange(16.0)), batch_size=4,
                        num_workers=args.workers, persistent_workers=True)
    for (batch,) in loader:
        print(batch.sum().item())


if __name__ == "__main__":
    main()
