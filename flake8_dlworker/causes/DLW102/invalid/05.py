from torch.utils.data import DataLoader

from example_data import Squares


tf = lambda x: x + 1


def main():
    loader = DataLoader(Squares(transform=tf), num_workers=2)
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main()
