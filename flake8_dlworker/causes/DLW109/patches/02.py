import torch.utils.data


class Lines(torch.utils.data.IterableDataset):
    def __init__(self, path):
        self.path = path

    def __iter__(self):
        return iter(open(self.path).read().splitlines())


loader = torch.utils.data.DataLoader(Lines("data.txt"), num_workers=4)
