from torch.utils.data import DataLoader

from example_data import Squares


def make_loader(workers):
    return DataLoader(Squares(), batch_size=4, num_workers=workers,
                      persistent_workers=workers > 0)


if __name__ == "__main__":
    for batch in make_loader(0):
        print(batch)
