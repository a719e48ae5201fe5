from torch.utils.data import DataLoader

from example_data import Squares


def main(**loader_options):
    loader = DataLoader(Squares(), batch_size=4, persistent_workers=True,
                        **loader_options)
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main(num_workers=2)
