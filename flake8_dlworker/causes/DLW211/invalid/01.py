from torch.utils.data import DataLoader

from example_data import Squares


class Epochs(Squares):
    epoch = 0

    def __getitem__(self, i):
        return 1000 * self.epoch + super().__getitem__(i)


if __name__ == "__main__":
    dataset = Epochs()
    loader = DataLoader(dataset, batch_size=4, num_workers=2, persistent_workers=True)
    for epoch in range(3):
        dataset.epoch = epoch  # the workers keep epoch 0
        for batch in loader:
            print(epoch, batch)
