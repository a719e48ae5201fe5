import threading

from torch.utils.data import DataLoader, Dataset


class Cached(Dataset):
    def __init__(self):
        self.lock = threading.Lock()
        self.cache = {}

    def __len__(self):
        return 8

    def __getitem__(self, i):
        with self.lock:
            return self.cache.setdefault(i, i * i)


def main():
    for batch in DataLoader(Cached(), batch_size=4, num_workers=2):
        print(batch)


if __name__ == "__main__":
    main()
