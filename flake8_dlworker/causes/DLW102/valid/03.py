from torch.utils.data import DataLoader

from example_data import Squares


def main():
    loader = DataLoader(Squares(transform=lambda x: x + 1), batch_size=4)
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main()
