import numpy as np
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __init__(self, path):
        self.frames = np.load(path)  # 6 GB, copied into every worker

    def __getitem__(self, i):
        return self.frames[i]

    def __len__(self):
        return len(self.frames)


if __name__ == "__main__":
    for batch in DataLoader(Frames("frames.npy"), batch_size=64, num_workers=8):
        pass
