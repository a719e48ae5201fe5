from torch.utils.data import DataLoader

from example_data import Squares


if __name__ == "__main__":
    def init(worker_id):
        print("worker", worker_id)

    loader = DataLoader(Squares(), batch_size=4, num_workers=2,
                        worker_init_fn=init)
    for batch in loader:
        print(batch)
