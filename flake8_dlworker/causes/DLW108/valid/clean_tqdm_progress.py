"""Clean: the progress bar lives in the main process around the loop; the dataset keeps
only a disabled one, which holds no stream and pickles."""
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm


class Counted(Dataset):
    def __init__(self, n):
        self.n = n
        self.progress = tqdm(total=n, disable=True)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return float(i)


if __name__ == "__main__":
    for batch in tqdm(DataLoader(Counted(8), batch_size=4, num_workers=2), desc="batches"):
        print(batch.sum().item())
