import torch
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __init__(self, n, device="cpu"):
        self.n = n
        self.device = device

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.full((3,), float(i)).to(self.device)


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    for batch in DataLoader(Images(8, device=device), batch_size=4, num_workers=2):
        print(batch)


if __name__ == "__main__":
    main()
