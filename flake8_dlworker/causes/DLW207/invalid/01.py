from torch.utils.data import DataLoader

from example_data import Squares


# Windows, CUDA build of torch, 16 GB of RAM, a small paging file
if __name__ == "__main__":
    for batch in DataLoader(Squares(), batch_size=4, num_workers=16):
        print(batch)
