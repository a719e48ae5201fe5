import torch
from torch.utils.data import DataLoader

from example_data import Squares


def main():
    use_gpu = torch.cuda.is_available()
    loader = DataLoader(Squares(), batch_size=4, num_workers=2, pin_memory=use_gpu)
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main()
