from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from example_data import Squares

if __name__ == "__main__":
    dataset = Squares()
    # evaluation: no shuffle, so the order is the same by design
    sampler = DistributedSampler(dataset, num_replicas=2, rank=0, shuffle=False)
    loader = DataLoader(dataset, batch_size=2, sampler=sampler, num_workers=2)
    for epoch in range(3):
        for batch in loader:
            print(epoch, batch)
