"""Train."""
import torch
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 1  # one pass
data = TensorDataset(torch.arange(16.0))
loader = DataLoader(data, batch_size=4, num_workers=2)
for (batch,) in loader:  # the loop
    print(batch.sum().item())
