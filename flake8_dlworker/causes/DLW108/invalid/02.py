import h5py
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __init__(self, path):
        self.images = h5py.File(path, "r")["images"]

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.images[i]


if __name__ == "__main__":
    loader = DataLoader(Frames("frames.h5"), batch_size=8, num_workers=4)
    for batch in loader:
        print(batch.shape)
