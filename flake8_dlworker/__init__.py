"""flake8-dlworker: find and explain what crashes PyTorch DataLoader workers."""


def __getattr__(name):
    # importlib.metadata costs ~50 ms to import; read the version only when asked
    # (flake8 has imported it already by the time it loads the plugin).
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("flake8-dlworker")
        except PackageNotFoundError:  # a source tree that is not installed
            return "0+unknown"
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
