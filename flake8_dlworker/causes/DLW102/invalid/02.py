from torch.utils.data import DataLoader

from example_data import Squares


def main():
    loader = DataLoader(Squares(), batch_size=4, num_workers=2,
                        worker_init_fn=lambda worker_id: print(worker_id))
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main()
