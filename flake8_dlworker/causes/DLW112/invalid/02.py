import torch
import torch.distributed as dist
from torch.utils.data import DataLoader

from example_data import Squares


def train(loader, epoch):
    for batch in loader:
        print(epoch, batch)


def main():
    dist.init_process_group("gloo")
    dataset = Squares()
    train_sampler = torch.utils.data.distributed.DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=2, sampler=train_sampler, num_workers=2)
    for epoch in range(10):
        train(loader, epoch)  # train() never tells the sampler the epoch either


if __name__ == "__main__":
    main()
