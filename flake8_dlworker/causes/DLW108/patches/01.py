from torch.utils.data import DataLoader, Dataset


class Lines(Dataset):
    def __init__(self, path):
        self.file = open(path)  # the whole file, read once
        self.lines = self.file.read().splitlines()

    def __len__(self):
        return len(self.lines)

    def __getitem__(self, i):
        return self.lines[i]


if __name__ == "__main__":
    print(list(DataLoader(Lines(__file__), num_workers=2)))
