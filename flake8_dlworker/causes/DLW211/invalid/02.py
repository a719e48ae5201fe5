from torch.utils.data import DataLoader

from example_data import Squares


class Epochs(Squares):
    def __init__(self):
        super().__init__()
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __getitem__(self, i):
        return 1000 * self.epoch + super().__getitem__(i)


if __name__ == "__main__":
    train_ds = Epochs()
    loader = DataLoader(train_ds, batch_size=4, num_workers=2, persistent_workers=True)
    for epoch in range(3):
        train_ds.set_epoch(epoch)
        for batch in loader:
            print(epoch, batch)
