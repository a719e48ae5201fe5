import urllib.request

from torch.utils.data import DataLoader, Dataset


class Remote(Dataset):
    def __init__(self, *urls):
        self.urls = urls

    def __getitem__(self, i):
        with urllib.request.urlopen(self.urls[i]) as response:
            return len(response.read())

    def __len__(self):
        return len(self.urls)


if __name__ == "__main__":
    loader = DataLoader(Remote("http://example.invalid/a"), num_workers=2)
    for batch in loader:
        print(batch)
