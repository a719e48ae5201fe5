from torch.utils.data import DataLoader

from example_data import Squares


def main():
    # num_workers left at its default, 0: the dataset never leaves this process
    print([batch for batch in DataLoader(Squares(transform=lambda x: x + 1), batch_size=4)])


if __name__ == "__main__":
    main()
