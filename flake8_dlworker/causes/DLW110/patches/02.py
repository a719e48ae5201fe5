import os

from torch.utils.data import DataLoader

loader = DataLoader(range(8), num_workers=32, persistent_workers=True)
