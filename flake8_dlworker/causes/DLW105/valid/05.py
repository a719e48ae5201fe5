from torch.utils.data import DataLoader

from example_data import Squares


PIN_MEMORY = False  # this machine has little RAM


def main():
    for batch in DataLoader(Squares(), batch_size=4, num_workers=2, pin_memory=PIN_MEMORY):
        print(batch)


if __name__ == "__main__":
    main()
