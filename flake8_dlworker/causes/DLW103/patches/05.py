from torch.utils.data import DataLoader, IterableDataset


class LitModel:
    def __init__(self, scale):
        self.scale = scale

    def train_dataloader(self):
        class Stream(IterableDataset):
            def __iter__(inner):
                return iter([float(i) * self.scale for i in range(8)])

        return DataLoader(Stream(), batch_size=4, num_workers=2)
