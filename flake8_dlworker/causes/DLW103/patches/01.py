import torch
from torch.utils.data import DataLoader


def main(data):
    # stack the first field
    def collate(batch):
        return torch.stack([item[0] for item in batch])

    return DataLoader(data, num_workers=2, collate_fn=collate)
