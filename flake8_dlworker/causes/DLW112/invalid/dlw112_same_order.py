"""DLW112: a DistributedSampler (rank 0 of 2, given explicitly: no process group needed)
whose set_epoch is never called. Every epoch should be a new order; each prints the
same one."""
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Numbers(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        return i


if __name__ == "__main__":
    dataset = Numbers()
    sampler = DistributedSampler(dataset, num_replicas=2, rank=0)  # DLW112: 15
    loader = DataLoader(dataset, batch_size=4, sampler=sampler, num_workers=1,
                        persistent_workers=True)
    for epoch in range(3):
        print("epoch %d:" % epoch, [batch.tolist() for batch in loader])
