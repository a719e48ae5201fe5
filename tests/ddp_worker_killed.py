"""Two gloo ranks on CPU: a DataLoader worker of rank 1 is killed (SIGKILL, as the
out-of-memory killer does) while rank 0 waits in all_reduce. Run under torchrun by
tests/test_explain.py, whose explain must name rank 1's worker, not rank 0's lost peer."""
import datetime
import os
import signal
import time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __init__(self, rank):
        self.rank = rank

    def __len__(self):
        return 64

    def __getitem__(self, i):
        if self.rank == 1 and i == 5:
            os.kill(os.getpid(), signal.SIGKILL)
        return torch.tensor(float(i * i))


def main():
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
    rank = dist.get_rank()
    loader = DataLoader(Squares(rank), batch_size=4, num_workers=2)
    for batch in loader:
        total = batch.sum()
        if rank == 0:
            time.sleep(0.2)
        dist.all_reduce(total)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
