import cv2
from torch.utils.data import DataLoader, Dataset


class Photos(Dataset):
    def __init__(self, paths):
        self.paths = list(paths)

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        image = cv2.imread(self.paths[i])
        return cv2.resize(image, (224, 224))


def no_cv_threads(worker_id):
    cv2.setNumThreads(0)


if __name__ == "__main__":
    loader = DataLoader(Photos(["a.jpg", "b.jpg"]), batch_size=2, num_workers=2,
                        worker_init_fn=no_cv_threads)
    for batch in loader:
        print(batch.shape)
