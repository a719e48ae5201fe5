from torch.utils.data import DataLoader, Dataset

double = lambda x: x * 2  # twice


class Numbers(Dataset):
    def __init__(self, transform):
        self.transform = transform

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return self.transform(i)


if __name__ == "__main__":
    print(list(DataLoader(Numbers(double), num_workers=2)))
