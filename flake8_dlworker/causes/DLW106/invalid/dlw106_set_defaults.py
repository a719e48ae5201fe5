"""DLW106: the option's own default is 4, but the parser's set_defaults turns it to 0 (the
dest is named apart from the flag), and persistent_workers stays on."""
import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--loader-workers", dest="workers", type=int, default=4)
    parser.set_defaults(workers=0)
    return parser.parse_args()


def main():
    args = parse_args()
    loader = DataLoader(TensorDataset(torch.arange(16.0)), batch_size=4,
                        num_workers=args.workers, persistent_workers=True)  # DLW106: 51
    for (batch,) in loader:
        print(batch.sum().item())


if __name__ == "__main__":
    main()
