from torch.utils.data import DataLoader, Dataset


class Paths(Dataset):
    def __init__(self):
        self.items = [{"path": "img_%d.jpg" % i, "label": i % 10}
                      for i in range(20_000_000)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]["label"]


if __name__ == "__main__":
    loader = DataLoader(Paths(), batch_size=1024, num_workers=16, prefetch_factor=8)
    for batch in loader:
        pass
