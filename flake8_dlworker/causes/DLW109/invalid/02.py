import argparse

from torch.utils.data import DataLoader, IterableDataset


class Lines(IterableDataset):
    def __init__(self, path):
        self.path = path

    def __iter__(self):
        with open(self.path) as handle:
            for line in handle:
                yield line.strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    for batch in DataLoader(Lines("data.txt"), batch_size=2, num_workers=args.workers):
        print(batch)


if __name__ == "__main__":
    main()
