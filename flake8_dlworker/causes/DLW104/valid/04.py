from torch.utils.data import DataLoader

from example_data import Squares


if __name__ == "__main__":
    def show(batch):
        print("batch:", batch)

    loader = DataLoader(Squares(), batch_size=4, num_workers=2)
    for batch in loader:
        show(batch)
