from torch.utils.data import DataLoader


def main(data):
    # the big one
    loader = DataLoader(data, batch_size=64, num_workers=8)
    return loader
