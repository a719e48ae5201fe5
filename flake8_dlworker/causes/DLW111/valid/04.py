import random

from torch.utils.data import DataLoader, Dataset


class Shuffled(Dataset):
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.order = list(range(8))
        self.rng.shuffle(self.order)

    def __len__(self):
        return len(self.order)

    def __getitem__(self, i):
        return self.order[i]


if __name__ == "__main__":
    for batch in DataLoader(Shuffled(0), batch_size=4, num_workers=2):
        print(batch)
