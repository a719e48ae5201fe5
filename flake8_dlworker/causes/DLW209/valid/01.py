import numpy as np
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __init__(self, path):
        self.path = path  # a few bytes to pickle
        self.frames = None
        self.length = len(np.load(path, mmap_mode="r"))

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        if self.frames is None:  # opened once in each worker
            self.frames = np.load(self.path, mmap_mode="r")
        return np.array(self.frames[i])

    def __getstate__(self):
        return dict(self.__dict__, frames=None)


if __name__ == "__main__":
    for batch in DataLoader(Frames("frames.npy"), batch_size=64, num_workers=8):
        pass
