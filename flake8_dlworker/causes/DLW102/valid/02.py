from torch.utils.data import DataLoader

from example_data import Squares


def main():
    # no workers: the batches are collated in this process, nothing is pickled
    for batch in DataLoader(Squares(), batch_size=4, num_workers=0,
                            collate_fn=lambda batch: batch):
        print(batch)


if __name__ == "__main__":
    main()
