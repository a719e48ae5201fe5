# run with: docker run --shm-size=8g ... (or keep fewer, smaller batches in flight)
import torch
from torch.utils.data import DataLoader, TensorDataset

if __name__ == "__main__":
    images = TensorDataset(torch.zeros(256, 3, 512, 512))
    for (batch,) in DataLoader(images, batch_size=16, num_workers=2, prefetch_factor=1):
        pass
