import torch.utils.data as tud


class Stream(tud.IterableDataset):
    def __iter__(self):
        return (i * i for i in range(8))


if __name__ == "__main__":
    for batch in tud.DataLoader(Stream(), batch_size=4, num_workers=4):
        print(batch)
