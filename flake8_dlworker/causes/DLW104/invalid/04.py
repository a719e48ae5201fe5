from torch.utils.data import DataLoader

from example_data import Squares


if __name__ == "__main__":
    class AddOne:
        def __call__(self, x):
            return x + 1

    loader = DataLoader(Squares(transform=AddOne()), batch_size=4, num_workers=2)
    for batch in loader:
        print(batch)
