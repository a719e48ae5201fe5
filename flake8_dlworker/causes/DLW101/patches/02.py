from torch.utils.data import DataLoader


def main():
    for batch in DataLoader(range(8), batch_size=4, num_workers=2):
        print(batch)


main()  # run it
