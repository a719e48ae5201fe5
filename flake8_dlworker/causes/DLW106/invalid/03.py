from torch.utils.data import DataLoader

from example_data import Squares


WORKERS = 0  # set to 0 while debugging a worker crash


def main():
    loader = DataLoader(Squares(), batch_size=4, num_workers=WORKERS,
                        persistent_workers=True)
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main()
