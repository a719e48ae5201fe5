import torch
from torch.utils.data import DataLoader, TensorDataset

if __name__ == "__main__":
    def collate(batch):  # stack the first field
        return torch.stack([item[0] for item in batch])

    data = TensorDataset(torch.arange(16.0))
    loader = DataLoader(data, num_workers=2, collate_fn=collate)
