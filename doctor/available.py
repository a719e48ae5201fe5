"""How much memory the run may still use: the host's available memory, or less when the
process lives in a cgroup with a memory limit (a Docker ``--memory``, Kubernetes limits,
Slurm ``--mem``). Inside such a container ``/proc/meminfo`` still shows the host, so the
limit minus what the cgroup already uses is what the out-of-memory killer goes by."""
import os

import psutil

#: (limit file, usage file) of cgroup v2, then of cgroup v1's memory controller
_CGROUP_FILES = (("memory.max", "memory.current"),
                 ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes"))
#: cgroup v1 writes "no limit" as a huge number rather than "max"
_NO_LIMIT = 1 << 60


def available_bytes(root="/sys/fs/cgroup"):
    """Bytes available to this process tree, or None when nothing can be measured."""
    try:
        host = psutil.virtual_memory().available
    except (psutil.Error, OSError):
        host = None
    room = cgroup_room(root)
    if room is None:
        return host
    return room if host is None else min(host, room)


def cgroup_room(root="/sys/fs/cgroup"):
    """The cgroup's memory limit minus its usage, or None without a limit."""
    for limit_name, usage_name in _CGROUP_FILES:
        limit, usage = _read_int(os.path.join(root, limit_name)), \
            _read_int(os.path.join(root, usage_name))
        if limit is not None and usage is not None and limit < _NO_LIMIT:
            return max(0, limit - usage)
    return None


def _read_int(path):
    try:
        with open(path) as handle:
            text = handle.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None  # "max": no limit
