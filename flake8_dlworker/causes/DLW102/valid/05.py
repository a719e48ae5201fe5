from torchvision import transforms
from torch.utils.data import DataLoader, Dataset


class Doubled(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        double = transforms.Lambda(lambda x: x * 2)
        return double(float(i))


if __name__ == "__main__":
    loader = DataLoader(Doubled(), batch_size=4, num_workers=2)
    for batch in loader:
        print(batch)
