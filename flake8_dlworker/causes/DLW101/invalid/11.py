import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, TensorDataset


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(1, 1)

    def training_step(self, batch, batch_idx):
        return self.layer(batch[0]).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


data = DataLoader(TensorDataset(torch.arange(8.0).unsqueeze(1)), batch_size=4)
# every spawned rank imports this script again and reaches fit() once more
trainer = pl.Trainer(strategy="ddp_spawn", accelerator="cpu", devices=2, max_epochs=1,
                     logger=False, enable_checkpointing=False)
trainer.fit(Model(), train_dataloaders=data)
