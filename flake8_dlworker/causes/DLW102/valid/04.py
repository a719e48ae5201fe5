import threading

from torch.utils.data import DataLoader

from example_data import Squares


def main():
    loader = DataLoader(Squares(), batch_size=4, num_workers=2)
    thread = threading.Thread(target=lambda: print(len(loader)))
    thread.start()
    thread.join()
    order = sorted(range(8), key=lambda i: -i)
    print(order)
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main()
