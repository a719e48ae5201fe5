"""DLW211: the dataset's epoch set in the main process after its persistent workers took
their copy. Every epoch should return 1000 * epoch + i*i; the workers keep epoch 0, and the
script prints what each epoch delivered."""
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
    loader = DataLoader(train_ds, batch_size=4, num_workers=2, persistent_workers=True)
    for epoch in range(3):
        train_ds.set_epoch(epoch)  # DLW211: 9
        print("epoch %d:" % epoch, [batch.tolist() for batch in loader])
