import cv2
from torch.utils.data import DataLoader, Dataset

cv2.setNumThreads(8)


class Photos(Dataset):
    def __init__(self, *paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return cv2.resize(cv2.imread(self.paths[i]), (224, 224))


if __name__ == "__main__":
    loader = DataLoader(Photos("a.jpg", "b.jpg"), batch_size=2, num_workers=2)
    for batch in loader:
        print(batch.shape)
