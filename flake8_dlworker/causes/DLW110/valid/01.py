import os

from torch.utils.data import DataLoader

from example_data import Squares


if __name__ == "__main__":
    workers = min(8, os.cpu_count() or 1)
    loader = DataLoader(Squares(), batch_size=4, num_workers=workers)
    for batch in loader:
        print(batch)
