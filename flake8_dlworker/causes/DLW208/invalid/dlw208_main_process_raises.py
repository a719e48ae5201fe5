"""DLW208: the workers deliver every batch; the script then fails in its own code, in
the main process, where no DataLoader worker cause explains it."""
from torch.utils.data import DataLoader

from example_data import Squares


def mean_loss(total, batches):
    return total / batches  # doctor: DLW208


def main():
    total, batches = 0.0, 0
    for batch in DataLoader(Squares(), batch_size=4, num_workers=2):
        total += batch.sum().item()
    print("total:", total)
    print("mean:", mean_loss(total, batches))


if __name__ == "__main__":
    main()
