from torch.utils.data import DataLoader


def main(data):
    loader = DataLoader(data, batch_size=4, num_workers=0,
                        persistent_workers=True)  # debugging
    return loader
