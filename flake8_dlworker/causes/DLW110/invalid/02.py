from torch.utils.data import DataLoader

from example_data import Squares


if __name__ == "__main__":
    loader = DataLoader(Squares(), 4, True, None, None, 16)
    for batch in loader:
        print(batch)
