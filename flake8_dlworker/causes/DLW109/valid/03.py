from torch.utils.data import DataLoader, IterableDataset


class Numbers(IterableDataset):
    def __iter__(self):
        return iter(range(8))


if __name__ == "__main__":
    for batch in DataLoader(Numbers(), batch_size=4, num_workers=1):
        print(batch)
    for batch in DataLoader(Numbers(), batch_size=4):
        print(batch)
