from torch.utils.data import DataLoader

from example_data import Squares


NUM_WORKERS = 32


def main():
    loader = DataLoader(Squares(), batch_size=4, num_workers=NUM_WORKERS)
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main()
