from torch.utils.data import Sampler
from torch.utils.data import DataLoader

from example_data import Squares


class KeySampler(Sampler):
    def __init__(self, n, key):
        self.n = n
        self.key = key

    def __iter__(self):
        return iter(sorted(range(self.n), key=self.key))

    def __len__(self):
        return self.n


if __name__ == "__main__":
    # the sampler stays in the main process: it is never pickled
    sampler = KeySampler(8, key=lambda i: -i)
    loader = DataLoader(Squares(), batch_size=4, sampler=sampler, num_workers=2)
    for batch in loader:
        print(batch)
