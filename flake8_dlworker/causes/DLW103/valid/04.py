from torch.utils.data import DataLoader

from example_data import Squares


class Collate:
    def __init__(self, size):
        self.size = size

    def __call__(self, batch):
        return batch[:self.size]


def main():
    def show(batch):
        print(batch)

    loader = DataLoader(Squares(), batch_size=4, num_workers=2,
                        collate_fn=Collate(4))
    for batch in loader:
        show(batch)


if __name__ == "__main__":
    main()
