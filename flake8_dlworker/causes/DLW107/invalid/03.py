import torch
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __init__(self):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.full((3,), float(i)).to(self.device)


def main():
    for batch in DataLoader(Images(), batch_size=4, num_workers=4):
        print(batch)


if __name__ == "__main__":
    main()
