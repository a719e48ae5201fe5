from torch.utils.data import DataLoader

from example_data import Squares


loader = DataLoader(Squares(), batch_size=4, num_workers=0)
for batch in loader:
    print(batch)
