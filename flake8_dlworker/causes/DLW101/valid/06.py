from torch.utils.data import DataLoader

from example_data import Squares


def train(loader):
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    train(DataLoader(Squares(), batch_size=4, num_workers=2))
