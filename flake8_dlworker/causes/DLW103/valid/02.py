from torch.utils.data import DataLoader

from example_data import Squares


def main():
    def pad(batch):
        return batch

    # no workers: nothing is pickled, so a nested collate is fine
    for batch in DataLoader(Squares(), batch_size=4, num_workers=0, collate_fn=pad):
        print(batch)


if __name__ == "__main__":
    main()
