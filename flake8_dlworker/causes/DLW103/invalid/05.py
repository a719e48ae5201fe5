from torch.utils.data import DataLoader

from example_data import Squares


def main(seed):
    def init(worker_id):
        print(seed + worker_id)

    loader = DataLoader(Squares(), batch_size=4, num_workers=2,
                        worker_init_fn=init)
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main(0)
