import torch
from torch.utils.data import DataLoader


def main(data):
    return DataLoader(data, batch_size=4, num_workers=64)
