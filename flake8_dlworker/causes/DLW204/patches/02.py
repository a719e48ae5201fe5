from torch.utils.data import DataLoader

kept = []
