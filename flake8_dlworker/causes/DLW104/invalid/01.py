from torch.utils.data import DataLoader, Dataset

if __name__ == "__main__":
    class Squares(Dataset):
        def __getitem__(self, i):
            return i * i

        def __len__(self):
            return 8

    loader = DataLoader(Squares(), batch_size=4, num_workers=2)
    for batch in loader:
        print(batch)
