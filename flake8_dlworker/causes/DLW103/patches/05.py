from torch.utils.data import DataLoader, Dataset


class LitModel:
    def __init__(self, scale):
        self.scale = scale

    def train_dataloader(self):
        class Scaled(Dataset):
            def __len__(inner):
                return 8

            def __getitem__(inner, i):
                return float(i) * self.scale

        return DataLoader(Scaled(), batch_size=4, num_workers=2)
