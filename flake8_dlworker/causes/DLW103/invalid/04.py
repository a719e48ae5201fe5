from torch.utils.data import DataLoader, Dataset


def main():
    class Cubes(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            return i ** 3

    loader = DataLoader(Cubes(), batch_size=4, num_workers=2)
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main()
