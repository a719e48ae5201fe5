import torch.utils.data as tud
from torch.utils.data import DataLoader

from example_data import Squares


if __name__ == "__main__":
    loader = tud.DataLoader(Squares(), batch_size=4, num_workers=64,
                            persistent_workers=True)
    for batch in loader:
        print(batch)
