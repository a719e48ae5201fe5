"""DLW104: a module-level collate_fn reads the parsed arguments, which only the
__main__ guard parses; in a spawned worker ``args`` does not exist."""
import argparse

import torch
from torch.utils.data import DataLoader


def scale(batch):
    return torch.tensor(batch) * args.factor


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--factor", type=int, default=3)
    args = parser.parse_args()  # DLW104: 5
    for batch in DataLoader([1, 2, 3, 4], batch_size=2, num_workers=2, collate_fn=scale):
        print(batch.tolist())
