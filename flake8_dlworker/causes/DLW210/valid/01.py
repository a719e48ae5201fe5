import numpy as np
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __init__(self, records):
        self.files = np.array([r["file"] for r in records], dtype=np.bytes_)
        self.labels = np.array([r["label"] for r in records], dtype=np.int64)

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        return int(self.labels[i])


def train(records, epochs=90):
    loader = DataLoader(Images(records), batch_size=256, num_workers=8,
                        persistent_workers=True, multiprocessing_context="fork")
    for epoch in range(epochs):
        for batch in loader:
            pass  # the workers' pages stay shared: nothing in the arrays is refcounted


if __name__ == "__main__":
    train(load_records())
