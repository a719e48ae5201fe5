"""DLW106: a Lightning DataModule keeps num_workers, 0 by default, and its loader asks
for persistent workers: made with the defaults, DataLoader raises ValueError."""
import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, TensorDataset


class Numbers(pl.LightningDataModule):
    def __init__(self, batch_size=4, num_workers=0):
        super().__init__()
        self.batch_size = batch_size
        self.num_workers = num_workers

    def train_dataloader(self):
        return DataLoader(TensorDataset(torch.arange(16.0)), batch_size=self.batch_size,
                          num_workers=self.num_workers,
                          persistent_workers=True)  # DLW106: 27


if __name__ == "__main__":
    for (batch,) in Numbers().train_dataloader():
        print(batch.sum().item())
