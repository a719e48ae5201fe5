from torch.utils.data import DataLoader, Dataset


def main():
    class Numbers(Dataset):
        def __len__(self):
            return 16

        def __getitem__(self, i):
            return float(i)

    loader = DataLoader(Numbers(), num_workers=2)
    return loader
