"""flake8-dlworker: find and explain what crashes PyTorch DataLoader workers."""
try:
    from importlib.metadata import version as _version

    __version__ = _version("flake8-dlworker")
except Exception:  # running from a source tree that is not installed
    __version__ = "0+unknown"
