from torchvision import transforms
from torch.utils.data import DataLoader

from example_data import Squares


def main():
    transform = transforms.Compose([
        transforms.ToTensor(),
        transforms.Lambda(lambda x: x * 2),
    ])
    loader = DataLoader(Squares(transform=transform), num_workers=2)
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main()
