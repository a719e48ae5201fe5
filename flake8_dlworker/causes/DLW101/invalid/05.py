from torch.utils.data import DataLoader

from example_data import Squares


def train(loader):
    for batch in loader:
        print(batch)


loader = DataLoader(Squares(), batch_size=4, num_workers=2)
train(loader)
