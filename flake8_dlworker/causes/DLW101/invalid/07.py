import multiprocessing

from torch.utils.data import DataLoader

from example_data import Squares


def work():
    print("working")


multiprocessing.Process(target=work).start()
