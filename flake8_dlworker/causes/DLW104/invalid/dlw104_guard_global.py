"""DLW104: the dataset's __getitem__ reads a vocabulary that only the __main__ guard
builds; a spawned worker re-imports the script without running the guard, and fails
with NameError: name 'vocab' is not defined."""
import torch
from torch.utils.data import DataLoader, Dataset


class Encoded(Dataset):
    def __init__(self, words):
        self.words = words

    def __len__(self):
        return len(self.words)

    def __getitem__(self, i):
        return torch.tensor([vocab[c] for c in self.words[i]])


if __name__ == "__main__":
    words = ["ab", "ba", "ca", "ac"]
    vocab = {c: i for i, c in enumerate(sorted(set("".join(words))))}  # DLW104: 5
    for batch in DataLoader(Encoded(words), batch_size=2, num_workers=2):
        print(batch.tolist())
