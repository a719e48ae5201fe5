"""DLW108: a tqdm progress bar kept on the dataset: it holds its output stream, which
cannot be pickled into a spawned worker."""
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm


class Counted(Dataset):
    def __init__(self, n):
        self.n = n
        self.progress = tqdm(total=n, desc="samples")  # DLW108: 25

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.progress.update(1)
        return float(i)


if __name__ == "__main__":
    for batch in DataLoader(Counted(8), batch_size=4, num_workers=2):
        print(batch.sum().item())
