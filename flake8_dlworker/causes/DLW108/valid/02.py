from torch.utils.data import DataLoader, Dataset


class Lines(Dataset):
    def __init__(self, path):
        self.path = path
        self.file = open(path)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["file"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.file = open(self.path)

    def __len__(self):
        return 3

    def __getitem__(self, i):
        return self.file.readline()


if __name__ == "__main__":
    for batch in DataLoader(Lines(__file__), batch_size=2, num_workers=2):
        print(batch)
