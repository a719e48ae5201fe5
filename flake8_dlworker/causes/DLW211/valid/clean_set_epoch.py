"""A clean look-alike of dlw211_set_epoch.py: the loader is not persistent, so each epoch's
workers receive the dataset with the epoch the main process just set."""
import torch
from torch.utils.data import DataLoader, Dataset


class Epochs(Dataset):
    def __init__(self):
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return torch.tensor(1000 * self.epoch + i * i)


if __name__ == "__main__":
    train_ds = Epochs()
    loader = DataLoader(train_ds, batch_size=4, num_workers=2, persistent_workers=False)
    for epoch in range(3):
        train_ds.set_epoch(epoch)
        print("epoch %d:" % epoch, [batch.tolist() for batch in loader])
