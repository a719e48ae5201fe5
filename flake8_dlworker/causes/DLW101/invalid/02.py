import torch.utils.data as tud


class Squares(tud.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return i * i


loader = tud.DataLoader(Squares(), batch_size=4, num_workers=2)
first = next(iter(loader))
print(first)
