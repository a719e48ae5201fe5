from torch.utils.data import DataLoader


def to_gpu(samples):
    return samples.to("cuda:0", non_blocking=True)


def main(data):
    loader = DataLoader(data, batch_size=4, num_workers=2, collate_fn=to_gpu)
    for batch in loader:
        print(batch)
