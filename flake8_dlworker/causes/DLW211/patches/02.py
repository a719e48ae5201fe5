from torch.utils.data import DataLoader

from example_data import Squares


class Epochs(Squares):
    epoch = 0

    def __getitem__(self, i):
        return 1000 * self.epoch + super().__getitem__(i)


if __name__ == "__main__":
    train_ds, eval_ds = Epochs(), Epochs()
    evaluate = DataLoader(eval_ds, batch_size=4, num_workers=2, persistent_workers=True)
    train = DataLoader(train_ds, batch_size=4, num_workers=2, persistent_workers=True)
    for epoch in range(3):
        train_ds.epoch = epoch  # only the training loader's dataset changes
        for batch in train:
            print(epoch, batch)
        for batch in evaluate:
            print("eval", batch)
