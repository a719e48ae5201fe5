import urllib.request

from torch.utils.data import DataLoader, Dataset


class Remote(Dataset):
    def __init__(self, urls):
        self.urls = list(urls)

    def __getitem__(self, i):
        with urllib.request.urlopen(self.urls[i], timeout=10) as response:
            return len(response.read())

    def __len__(self):
        return len(self.urls)


if __name__ == "__main__":
    for batch in DataLoader(Remote(["http://example.invalid/a"]), num_workers=2, timeout=60):
        print(batch)
