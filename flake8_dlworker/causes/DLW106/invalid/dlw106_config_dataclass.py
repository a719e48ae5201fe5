"""DLW106: a config dataclass whose num_workers field defaults to 0, left at its default,
with persistent_workers on."""
from dataclasses import dataclass

import torch
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class TrainConfig:
    batch_size: int = 4
    num_workers: int = 0


def main():
    config = TrainConfig(batch_size=8)
    loader = DataLoader(TensorDataset(torch.arange(16.0)), batch_size=config.batch_size,
                        num_workers=config.num_workers,
                        persistent_workers=True)  # DLW106: 25
    for (batch,) in loader:
        print(batch.sum().item())


if __name__ == "__main__":
    main()
