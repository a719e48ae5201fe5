import torch
from torch.utils.data import DataLoader

from example_data import Squares


def to_gpu(batch):
    return torch.tensor(batch).to("cuda")


if __name__ == "__main__":
    loader = DataLoader(Squares(), batch_size=4, num_workers=2, collate_fn=to_gpu)
    for batch in loader:
        print(batch)
