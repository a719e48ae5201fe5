"""DLW103: collate_fn is wrapped by a timing decorator that returns its nested wrapper
without functools.wraps: the name 'collate' holds 'timed.<locals>.wrapper'."""
import time

import torch
from torch.utils.data import DataLoader, TensorDataset


def timed(fn):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        wrapper.seconds += time.perf_counter() - start
        return out
    wrapper.seconds = 0.0
    return wrapper


@timed
def collate(batch):
    return torch.stack([item[0] for item in batch])


if __name__ == "__main__":
    data = TensorDataset(torch.arange(16.0))
    loader = DataLoader(data, batch_size=4, num_workers=2, collate_fn=collate)  # DLW103: 71
    for batch in loader:
        print(batch.sum().item())
