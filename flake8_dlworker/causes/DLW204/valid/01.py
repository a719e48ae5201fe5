import torch.multiprocessing
from torch.utils.data import DataLoader

from example_data import Squares


torch.multiprocessing.set_sharing_strategy("file_system")

if __name__ == "__main__":
    kept = []
    for batch in DataLoader(Squares(), batch_size=1, num_workers=2):
        kept.append(batch.clone())
