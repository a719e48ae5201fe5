import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, TensorDataset


class ScaledLoss:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, out):
        return out.pow(2).mean() * self.scale


class Model(pl.LightningModule):
    def __init__(self, scale):
        super().__init__()
        self.layer = torch.nn.Linear(1, 1)
        self.loss_fn = ScaledLoss(scale)

    def training_step(self, batch, batch_idx):
        return self.loss_fn(self.layer(batch[0]))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


if __name__ == "__main__":
    data = DataLoader(TensorDataset(torch.arange(8.0).unsqueeze(1)), batch_size=4)
    trainer = pl.Trainer(strategy="ddp_spawn", accelerator="cpu", devices=2, max_epochs=1,
                         logger=False, enable_checkpointing=False)
    trainer.fit(Model(2.0), train_dataloaders=data)
