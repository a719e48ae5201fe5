from torch.utils.data import DataLoader


def main(data):
    return DataLoader(data, prefetch_factor=4, batch_size=4)
