from torch.utils.data import DataLoader

from example_data import Squares


def main():
    def pad(batch):
        return batch

    loader = DataLoader(Squares(), batch_size=4, num_workers=2, collate_fn=pad)
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main()
