import torch.utils.data as tud
from torch.utils.data import DataLoader

from example_data import Squares


if __name__ == "__main__":
    loader = tud.DataLoader(Squares(), 4, False, None, None, 0, prefetch_factor=2)
    for batch in loader:
        print(batch)
