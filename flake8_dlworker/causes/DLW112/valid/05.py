import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from example_data import Squares
from training import train_one_epoch  # sets the sampler's epoch: not seen from here


def main():
    dist.init_process_group("gloo")
    dataset = Squares()
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=2, sampler=sampler, num_workers=2)
    for epoch in range(10):
        train_one_epoch(loader, epoch, sampler=sampler)


if __name__ == "__main__":
    main()
