import torch
from torch.utils.data import DataLoader, Dataset


class OnCpu(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.full((3,), float(i))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(OnCpu(), batch_size=4, num_workers=2)
    for batch in loader:
        batch = batch.to(device, non_blocking=True)
        print(batch)
