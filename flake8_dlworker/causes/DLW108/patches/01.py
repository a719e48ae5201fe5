from torch.utils.data import DataLoader, Dataset


class Words(Dataset):
    def __init__(self, path):
        self.source = open(path)  # the whole file, read once
        self.words = self.source.read().split()

    def __getitem__(self, i):
        return self.words[i]

    def __len__(self):
        return len(self.words)


if __name__ == "__main__":
    print(list(DataLoader(Words(__file__), num_workers=2)))
