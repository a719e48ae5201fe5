from torch.utils.data import DataLoader, Dataset


class Lines(Dataset):
    def __init__(self, path):
        self.file = open(path)

    def __len__(self):
        return 3

    def __getitem__(self, i):
        return self.file.readline()


if __name__ == "__main__":
    for batch in DataLoader(Lines(__file__), batch_size=2):
        print(batch)
