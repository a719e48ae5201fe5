from torch.utils.data import DataLoader

from example_data import Squares

double = lambda x: x * 2  # twice


if __name__ == "__main__":
    print(list(DataLoader(Squares(double), num_workers=2)))
