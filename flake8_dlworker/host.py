"""Facts about the host that runs the check: RAM, usable CPUs, /dev/shm, open files.

The flake8 plugin reads these once when flake8 starts (for its host rules); the doctor
reads them into every report's ``host`` object.  psutil is imported only when asked.
"""
import platform

from flake8_dlworker.platforms import nofile_limit, shm_gb, usable_cpus

__all__ = ["ram_gb", "available_gb", "usable_cpus", "shm_gb", "nofile_limit", "facts"]

_GIB = 1024 ** 3


def ram_gb():
    """Total RAM in GiB."""
    import psutil

    return psutil.virtual_memory().total / _GIB


def available_gb():
    """RAM the host can still hand out without swapping, in GiB."""
    import psutil

    return psutil.virtual_memory().available / _GIB


def facts(torch_version=None, cuda=False):
    """The ``host`` object of the doctor's report (SPEC.md)."""
    shm = shm_gb()
    return {
        "os": "%s %s" % (platform.system(), platform.release()),
        "python": platform.python_version(),
        "torch": torch_version,
        "cuda": bool(cuda),
        "cpus": usable_cpus(),
        "ram_gb": round(ram_gb(), 1),
        "shm_gb": round(shm[0], 1) if shm else None,
        "nofile_limit": nofile_limit(),
    }
