from torch.utils.data import DataLoader

from example_data import Squares


if __name__ == "__main__":
    loader = DataLoader(Squares(), batch_size=4, pin_memory=True)
    for batch in loader:
        print(batch)
