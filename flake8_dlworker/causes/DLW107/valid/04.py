import torch
from torch.utils.data import DataLoader, Dataset


class Floats(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        x = torch.full((3,), float(i))
        if torch.cuda.is_available():
            x = x.to("cpu")
        return x


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    for batch in DataLoader(Floats(), batch_size=4, num_workers=2, pin_memory=True):
        print(batch.to(device, non_blocking=True))


if __name__ == "__main__":
    main()
