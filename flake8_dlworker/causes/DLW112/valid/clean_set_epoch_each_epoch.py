"""A clean look-alike of dlw112_same_order.py: the loop tells the sampler its epoch, so
each epoch is shuffled anew (the same order on every rank)."""
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Numbers(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        return i


if __name__ == "__main__":
    dataset = Numbers()
    sampler = DistributedSampler(dataset, num_replicas=2, rank=0)
    loader = DataLoader(dataset, batch_size=4, sampler=sampler, num_workers=1,
                        persistent_workers=True)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        print("epoch %d:" % epoch, [batch.tolist() for batch in loader])
