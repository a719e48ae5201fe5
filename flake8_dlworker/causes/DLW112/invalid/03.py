from torch.utils.data import DataLoader, DistributedSampler

from example_data import Squares

if __name__ == "__main__":
    loader = DataLoader(Squares(), batch_size=2, num_workers=2,
                        sampler=DistributedSampler(Squares(), num_replicas=2, rank=1))
    for epoch in range(3):
        print(epoch, [batch.tolist() for batch in loader])
