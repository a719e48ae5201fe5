from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class Numbers(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(8))
        return iter(range(info.id, 8, info.num_workers))


if __name__ == "__main__":
    loader = DataLoader(Numbers(), batch_size=4, num_workers=2)
    for batch in loader:
        print(batch)
