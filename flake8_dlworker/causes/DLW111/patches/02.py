import random

import torch.utils.data as tud


class Jitter(tud.Dataset):
    def __init__(self, seed):
        self.random = random.Random(seed)

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return i + self.random.random()


def main():
    data = Jitter(0)
    return tud.DataLoader(data, num_workers=2)
