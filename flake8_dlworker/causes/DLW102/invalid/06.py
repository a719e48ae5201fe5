from torch.utils.data import DataLoader, Dataset


class Scaled(Dataset):
    def __init__(self, factor):
        self.fn = lambda x: x * factor

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self.fn(i)


if __name__ == "__main__":
    loader = DataLoader(Scaled(3), batch_size=4, num_workers=2)
    for batch in loader:
        print(batch)
