import random

from torch.utils.data import DataLoader, Dataset


class Flips(Dataset):
    def __init__(self, seed):
        self.random = random.Random(seed)

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return -i if self.random.random() < 0.5 else i


def main():
    for batch in DataLoader(Flips(seed=1), batch_size=4, num_workers=2):
        print(batch)


if __name__ == "__main__":
    main()
