from torch.utils.data import DataLoader


def main(data, factor):
    return DataLoader(data, num_workers=2,
                      collate_fn=lambda b: [x * factor for x in b])  # scaled
