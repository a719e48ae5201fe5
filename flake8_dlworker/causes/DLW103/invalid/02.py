import functools

from torch.utils.data import DataLoader

from example_data import Squares


def main(size):
    def pad(batch, size):
        return batch + [0] * (size - len(batch))

    loader = DataLoader(Squares(), batch_size=4, num_workers=2,
                        collate_fn=functools.partial(pad, size=size))
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main(4)
