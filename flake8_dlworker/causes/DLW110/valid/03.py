import argparse

from torch.utils.data import DataLoader

from example_data import Squares


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=16)
    args = parser.parse_args()
    loader = DataLoader(Squares(), batch_size=4, num_workers=args.workers)
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main()
