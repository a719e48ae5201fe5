from torch.utils.data import DataLoader, Dataset


def train(paths, root):
    class Files(Dataset):
        """Reads the files under root."""

        def __init__(self, names):
            self.names = names

        def __len__(self):
            return len(self.names)

        def __getitem__(self, i):
            with open(root + "/" + self.names[i]) as handle:
                return handle.read()

    return list(DataLoader(Files(paths), batch_size=2, num_workers=2))
