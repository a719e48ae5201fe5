"""Every known handle of the record (flake8_dlworker.handles, DLW108's ``handles``) is
proven unpicklable where its module is installed: a real, tiny instance is made (files in
a temporary folder, sockets on the loopback only) and ``pickle.dumps`` must raise. An
entry whose module is not installed here is skipped, by name; so is one the record says
pickles (the worker fails to rebuild it: its own fixture shows that run)."""
import contextlib
import importlib
import importlib.util
import pickle
import socket
import wave

import pytest

from flake8_dlworker.handles import HANDLES


def _wav(folder):
    path = str(folder / "tone.wav")
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\0\0" * 80)
    return path


def _text(folder):
    path = folder / "rows.csv"
    path.write_text("a,b\n1,2\n")
    return str(path)


@contextlib.contextmanager
def _listening():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        yield server.getsockname()
    finally:
        server.close()


def _connection(make, tmp, stack):
    address = stack.enter_context(_listening())
    return make(address)


#: qualified name -> how to make a tiny real one: (the call, a temporary folder, an
#: ExitStack for what must be closed) -> the object
MAKERS = {
    "open": lambda f, tmp, stack: f(_text(tmp)),
    "io.open": lambda f, tmp, stack: f(_text(tmp), "rb"),
    "gzip.open": lambda f, tmp, stack: f(str(tmp / "x.gz"), "wb"),
    "bz2.open": lambda f, tmp, stack: f(str(tmp / "x.bz2"), "wb"),
    "lzma.open": lambda f, tmp, stack: f(str(tmp / "x.xz"), "wb"),
    "h5py.File": lambda f, tmp, stack: f(str(tmp / "x.h5"), "w"),
    "lmdb.open": lambda f, tmp, stack: f(str(tmp / "db"), map_size=1 << 20),
    "lmdb.Environment": lambda f, tmp, stack: f(str(tmp / "db"), map_size=1 << 20),
    "sqlite3.connect": lambda f, tmp, stack: f(str(tmp / "x.db")),
    "sqlite3.Cursor": lambda f, tmp, stack: f(
        importlib.import_module("sqlite3").connect(str(tmp / "x.db"))),
    "zipfile.ZipFile": lambda f, tmp, stack: f(str(tmp / "x.zip"), "w"),
    "tarfile.open": lambda f, tmp, stack: f(str(tmp / "x.tar"), "w"),
    "tarfile.TarFile": lambda f, tmp, stack: f(str(tmp / "x.tar"), "w"),
    "socket.socket": lambda f, tmp, stack: f(),
    "socket.create_connection": lambda f, tmp, stack: _connection(f, tmp, stack),
    "threading.Lock": lambda f, tmp, stack: f(),
    "threading.RLock": lambda f, tmp, stack: f(),
    "threading.local": lambda f, tmp, stack: f(),
    "threading.Event": lambda f, tmp, stack: f(),
    "threading.Condition": lambda f, tmp, stack: f(),
    "threading.Semaphore": lambda f, tmp, stack: f(),
    "threading.BoundedSemaphore": lambda f, tmp, stack: f(),
    "threading.Thread": lambda f, tmp, stack: f(target=print),
    "queue.Queue": lambda f, tmp, stack: f(),
    "queue.SimpleQueue": lambda f, tmp, stack: f(),
    "concurrent.futures.ThreadPoolExecutor": lambda f, tmp, stack: f(1),
    "concurrent.futures.ProcessPoolExecutor": lambda f, tmp, stack: f(1),
    "multiprocessing.Pool": lambda f, tmp, stack: f(1),
    "multiprocessing.pool.Pool": lambda f, tmp, stack: f(1),
    "multiprocessing.pool.ThreadPool": lambda f, tmp, stack: f(1),
    "subprocess.Popen": lambda f, tmp, stack: f(["true"]),
    "logging.FileHandler": lambda f, tmp, stack: f(str(tmp / "x.log")),
    "logging.StreamHandler": lambda f, tmp, stack: f(),
    "mmap.mmap": lambda f, tmp, stack: f(-1, 16),
    "select.epoll": lambda f, tmp, stack: f(),
    "select.kqueue": lambda f, tmp, stack: f(),
    "select.devpoll": lambda f, tmp, stack: f(),
    "tempfile.TemporaryFile": lambda f, tmp, stack: f(dir=str(tmp)),
    "tempfile.NamedTemporaryFile": lambda f, tmp, stack: f(dir=str(tmp)),
    "csv.reader": lambda f, tmp, stack: f(stack.enter_context(open(_text(tmp)))),
    "csv.DictReader": lambda f, tmp, stack: f(stack.enter_context(open(_text(tmp)))),
    "torch.utils.tensorboard.SummaryWriter": lambda f, tmp, stack: f(str(tmp)),
    "tensorboardX.SummaryWriter": lambda f, tmp, stack: f(str(tmp)),
    "cv2.VideoCapture": lambda f, tmp, stack: f(str(tmp / "none.mp4")),
    "av.open": lambda f, tmp, stack: f(_wav(tmp)),
    "soundfile.SoundFile": lambda f, tmp, stack: f(_wav(tmp)),
    "tables.open_file": lambda f, tmp, stack: f(str(tmp / "x.h5"), "w"),
    "plyvel.DB": lambda f, tmp, stack: f(str(tmp / "db"), create_if_missing=True),
    # a connection needs a server: the client object is made without connecting
    "psycopg2.connect": None,
    "pymongo.MongoClient": lambda f, tmp, stack: f(connect=False),
    "redis.Redis": lambda f, tmp, stack: f(),
    "redis.StrictRedis": lambda f, tmp, stack: f(),
    "boto3.client": lambda f, tmp, stack: f("s3", region_name="us-east-1",
                                            aws_access_key_id="x", aws_secret_access_key="x"),
    "boto3.resource": lambda f, tmp, stack: f("s3", region_name="us-east-1",
                                              aws_access_key_id="x",
                                              aws_secret_access_key="x"),
    "tqdm.tqdm": lambda f, tmp, stack: f(total=3),
    "tqdm.trange": lambda f, tmp, stack: f(3),
    "tqdm.std.tqdm": lambda f, tmp, stack: f(total=3),
    "tqdm.auto.tqdm": lambda f, tmp, stack: f(total=3),
    "tqdm.auto.trange": lambda f, tmp, stack: f(3),
    "rich.progress.Progress": lambda f, tmp, stack: f(),
}
#: the modules an entry needs beyond its own (found without importing them)
NEEDS = {"torch.utils.tensorboard.SummaryWriter": ("tensorboard",)}


def test_every_known_handle_has_a_maker_here():
    assert {name for name, handle in HANDLES.items() if not handle.pickles} == set(MAKERS)


def _installed(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _call(qualname):
    """The call ``qualname`` names, or None where its module is not installed here."""
    module, _, attr = qualname.rpartition(".")
    if not module:
        return __builtins__["open"] if isinstance(__builtins__, dict) else open
    top = module.split(".")[0]
    if not all(map(_installed, (top,) + NEEDS.get(qualname, ()))):
        return None
    try:
        return getattr(importlib.import_module(module), attr, None)
    except ImportError:
        return None


@pytest.mark.parametrize("qualname", list(HANDLES))
def test_every_known_handle_fails_to_pickle_where_installed(qualname, tmp_path):
    handle = HANDLES[qualname]
    if handle.pickles:
        pytest.skip("%s: the record says it pickles (the worker fails to rebuild it)" % qualname)
    call = _call(qualname)
    if call is None:
        pytest.skip("%s: not installed here (or not on this system)" % qualname)
    if MAKERS[qualname] is None:
        pytest.skip("%s: needs a running server to make one" % qualname)
    with contextlib.ExitStack() as stack:
        made = MAKERS[qualname](call, tmp_path, stack)
        if qualname == "subprocess.Popen":
            stack.callback(made.wait)
        for name in ("terminate", "close", "shutdown"):  # a pool's processes end at once
            if callable(getattr(made, name, None)):
                stack.callback(getattr(made, name))
                break
        with pytest.raises((TypeError, AttributeError, NotImplementedError,
                            pickle.PicklingError)):
            pickle.dumps(made)
