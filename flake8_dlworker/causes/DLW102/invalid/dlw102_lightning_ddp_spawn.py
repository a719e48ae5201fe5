"""DLW102: Lightning's ddp_spawn starts its ranks with torch.multiprocessing, which
pickles the Trainer, with the LightningModule it fits, into every rank; the module keeps
a lambda, which cannot go. The ranks never start.

    python -m doctor dlw102_lightning_ddp_spawn.py
"""
import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, TensorDataset


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(1, 1)
        self.loss_fn = lambda out: out.pow(2).mean()  # DLW102: 24

    def training_step(self, batch, batch_idx):
        return self.loss_fn(self.layer(batch[0]))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


def main():
    data = DataLoader(TensorDataset(torch.arange(16.0).unsqueeze(1)), batch_size=4,
                      num_workers=1)
    trainer = pl.Trainer(strategy="ddp_spawn", accelerator="cpu", devices=2, max_epochs=1,
                         logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False)
    trainer.fit(Model(), train_dataloaders=data)
    print("finished", trainer.state.finished)


if __name__ == "__main__":
    main()
