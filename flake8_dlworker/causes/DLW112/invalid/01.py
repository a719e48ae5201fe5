from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from example_data import Squares

if __name__ == "__main__":
    dataset = Squares()
    sampler = DistributedSampler(dataset, num_replicas=2, rank=0)
    loader = DataLoader(dataset, batch_size=2, sampler=sampler, num_workers=2)
    for epoch in range(3):
        for batch in loader:  # the same order every epoch
            print(epoch, batch)
