"""DLW101: the module-level loop iterates one of two loaders, chosen by a conditional
expression; the one it takes starts workers, and every spawned worker re-runs the loop."""
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

data = TensorDataset(torch.arange(16.0))
train = DataLoader(data, batch_size=4, num_workers=2)
check = DataLoader(data, batch_size=8)
for step, (batch,) in enumerate(train if "--check" not in sys.argv else check):  # DLW101: 1
    print(step, batch.sum().item())
