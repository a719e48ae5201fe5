from torch.utils.data import DataLoader, IterableDataset


class Shards(IterableDataset):
    def __init__(self, shards):
        self.shards = shards

    def __iter__(self):
        for shard in self.shards:
            yield from self._read(shard)

    def _read(self, shard):
        return range(shard * 4, shard * 4 + 4)


if __name__ == "__main__":
    dataset = Shards([0, 1, 2])
    for batch in DataLoader(dataset, batch_size=4, num_workers=3):
        print(batch)
