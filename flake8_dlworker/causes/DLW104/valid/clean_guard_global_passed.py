"""Clean: the vocabulary built under the __main__ guard is handed to the dataset, which
keeps it; the names __getitem__ reads that the guard also binds (``c``, ``i``) are its
own (a comprehension's, a parameter)."""
import torch
from torch.utils.data import DataLoader, Dataset


class Encoded(Dataset):
    def __init__(self, words, vocab):
        self.words = words
        self.vocab = vocab

    def __len__(self):
        return len(self.words)

    def __getitem__(self, i):
        return torch.tensor([self.vocab[c] for c in self.words[i]])


if __name__ == "__main__":
    words = ["ab", "ba", "ca", "ac"]
    vocab = {c: i for i, c in enumerate(sorted(set("".join(words))))}
    for batch in DataLoader(Encoded(words, vocab), batch_size=2, num_workers=2):
        print(batch.tolist())
