import torch
from torch.utils.data import DataLoader

if __name__ == "__main__":
    kept = list(DataLoader(range(1000), batch_size=1, num_workers=2))
