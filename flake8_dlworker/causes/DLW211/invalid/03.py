from torch.utils.data import DataLoader

from example_data import Squares


class Scaled(Squares):
    factor = 1.0

    def __getitem__(self, i):
        return super().__getitem__(i) * self.factor


def main():
    loader = DataLoader(Scaled(), batch_size=4, num_workers=2, persistent_workers=True)
    for epoch in range(3):
        loader.dataset.factor = 0.5 ** epoch  # a curriculum the workers never see
        for batch in loader:
            print(epoch, batch)


if __name__ == "__main__":
    main()
