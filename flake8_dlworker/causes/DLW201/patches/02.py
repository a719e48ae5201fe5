from torch.utils.data import DataLoader


def main(data, args):
    for batch in DataLoader(data, num_workers=args.workers):
        print(batch)
