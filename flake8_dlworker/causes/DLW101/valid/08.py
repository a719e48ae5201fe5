from multiprocessing import Pool

from torch.utils.data import DataLoader, Dataset


if __name__ == "__main__":
    with Pool(2) as pool:
        squares = pool.map(abs, range(8))
    print(list(DataLoader(squares, batch_size=4, num_workers=2)))
