import torch
from torch.utils.data import DataLoader


def main(data):
    return DataLoader(data, batch_size=4, pin_memory=True)
