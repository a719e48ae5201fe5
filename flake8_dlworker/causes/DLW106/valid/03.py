from torch.utils.data import DataLoader

from example_data import Squares


def make_loader(workers):
    return DataLoader(Squares(), batch_size=4, num_workers=workers,
                      prefetch_factor=2 if workers else None)


if __name__ == "__main__":
    for batch in make_loader(0):
        print(batch)
