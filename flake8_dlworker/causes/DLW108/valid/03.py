from torch.utils.data import DataLoader, Dataset


class Lines(Dataset):
    def __init__(self, path):
        with open(path) as handle:
            self.lines = handle.readlines()

    def __len__(self):
        return len(self.lines)

    def __getitem__(self, i):
        return self.lines[i]


if __name__ == "__main__":
    for batch in DataLoader(Lines(__file__), batch_size=2, num_workers=2):
        print(batch)
