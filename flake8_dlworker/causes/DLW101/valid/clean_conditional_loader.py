"""Clean: the loop that iterates one of two loaders, chosen by a conditional expression,
runs under the __main__ guard."""
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

if __name__ == "__main__":
    data = TensorDataset(torch.arange(16.0))
    train = DataLoader(data, batch_size=4, num_workers=2)
    check = DataLoader(data, batch_size=8)
    for step, (batch,) in enumerate(train if "--check" not in sys.argv else check):
        print(step, batch.sum().item())
