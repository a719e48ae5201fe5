from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __init__(self, records):
        self.files = [r["file"] for r in records]     # millions of str objects
        self.labels = {r["file"]: r["label"] for r in records}

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        return self.labels[self.files[i]]


if __name__ == "__main__":
    loader = DataLoader(Images(load_records()), batch_size=256, num_workers=8,
                        persistent_workers=True, multiprocessing_context="fork")
    for epoch in range(90):
        for batch in loader:
            pass
