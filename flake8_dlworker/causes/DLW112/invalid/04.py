from torch.utils.data import BatchSampler, DataLoader
from torch.utils.data.distributed import DistributedSampler

from example_data import Squares

if __name__ == "__main__":
    dataset = Squares()
    sampler = DistributedSampler(dataset, num_replicas=2, rank=0, shuffle=True, seed=7)
    batches = BatchSampler(sampler, batch_size=2, drop_last=False)
    loader = DataLoader(dataset, batch_sampler=batches, num_workers=2)
    for epoch in range(3):
        sampler.seed = epoch  # not the epoch: set_epoch is what reshuffles
        for batch in loader:
            print(epoch, batch)
