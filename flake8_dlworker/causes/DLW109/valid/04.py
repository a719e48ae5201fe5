import math

from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class Range(IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        return iter(range(self.start, self.end))


def split_range(worker_id):
    info = get_worker_info()
    dataset = info.dataset
    per_worker = math.ceil((dataset.end - dataset.start) / info.num_workers)
    dataset.start = dataset.start + worker_id * per_worker
    dataset.end = min(dataset.start + per_worker, dataset.end)


if __name__ == "__main__":
    loader = DataLoader(Range(0, 8), batch_size=4, num_workers=2,
                        worker_init_fn=split_range)
    for batch in loader:
        print(batch)
