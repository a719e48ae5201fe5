import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset


class Ragged(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.zeros(4 + i % 2, 3)


def pad(batch):
    return pad_sequence(batch, batch_first=True)


if __name__ == "__main__":
    for batch in DataLoader(Ragged(), batch_size=2, num_workers=2, collate_fn=pad):
        print(batch.shape)
