import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm

from example_data import Squares


def main():
    dist.init_process_group("gloo")
    dataset = Squares()
    loader = DataLoader(dataset, batch_size=2, sampler=DistributedSampler(dataset),
                        num_workers=2)
    for epoch in tqdm(range(3), desc="epochs"):
        # one pass over this rank's share
        for batch in loader:
            print(epoch, batch)


if __name__ == "__main__":
    main()
