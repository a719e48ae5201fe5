from torch.utils.data import DataLoader


def main(data):
    workers = 0
    return DataLoader(data, num_workers=workers, persistent_workers=True, prefetch_factor=4)
