"""Facts about the host that runs the check: RAM, usable CPUs, /dev/shm, open files.

The flake8 plugin reads these once when flake8 starts (DLW105, DLW110); the doctor
reads them into every report's ``host`` object.  psutil is imported only when asked.
"""
import os
import platform

_GIB = 1024 ** 3


def ram_gb():
    """Total RAM in GiB."""
    import psutil

    return psutil.virtual_memory().total / _GIB


def available_gb():
    """RAM the host can still hand out without swapping, in GiB."""
    import psutil

    return psutil.virtual_memory().available / _GIB


def usable_cpus():
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def shm_gb(path="/dev/shm"):
    """(size, used) of the shared-memory filesystem in GiB, or None where there is none."""
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    total = st.f_blocks * st.f_frsize
    return total / _GIB, (st.f_blocks - st.f_bfree) * st.f_frsize / _GIB


def nofile_limit():
    """The soft limit on open file descriptors, or None where there is none to read."""
    try:
        import resource
    except ImportError:
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


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
