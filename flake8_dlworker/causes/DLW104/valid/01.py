from torch.utils.data import DataLoader

from example_data import Squares


if __name__ == "__main__":
    loader = DataLoader(Squares(), batch_size=4, num_workers=2)
    for batch in loader:
        print(batch)
