from torch.utils.data import DataLoader, IterableDataset


class Lines(IterableDataset):
    def __init__(self, lines):
        self.lines = lines

    # every line, in order
    def __iter__(self):
        yield from self.lines


if __name__ == "__main__":
    for batch in DataLoader(Lines(["a", "b", "c", "d"]), batch_size=2, num_workers=2):
        print(batch)
