"""Clean: the DataModule's loader keeps its workers only when it has some; made with
the default of 0 workers, it runs in the main process."""
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
                          persistent_workers=self.num_workers > 0)


if __name__ == "__main__":
    for (batch,) in Numbers().train_dataloader():
        print(batch.sum().item())
