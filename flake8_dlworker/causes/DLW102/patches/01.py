from torch.utils.data import DataLoader


def main(data):
    # keep batches as lists
    loader = DataLoader(data, num_workers=2, collate_fn=lambda b: b)
    return loader
