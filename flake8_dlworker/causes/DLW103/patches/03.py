from torch.utils.data import DataLoader


def main(data, scale):
    def collate(batch):
        return [x * scale for x in batch]

    return DataLoader(data, num_workers=2, collate_fn=collate)
