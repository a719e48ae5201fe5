from torch.utils.data import DataLoader

from example_data import Squares


# Windows: keep the worker count small, or enlarge the paging file
if __name__ == "__main__":
    for batch in DataLoader(Squares(), batch_size=4, num_workers=2):
        print(batch)
