import torch.utils.data as tud
from torch.utils.data import DataLoader

from example_data import Squares


if __name__ == "__main__":
    loader = tud.DataLoader(Squares(), 4, False, None, None, 2, None, True)
    for batch in loader:
        print(batch)
