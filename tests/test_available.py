"""The memory a run may still use: the host's, or a cgroup's limit minus its usage."""
import psutil

from doctor.available import available_bytes, cgroup_room

GIB = 1024 ** 3


def _cgroup(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    return str(tmp_path)


def test_cgroup_v2_limit_minus_usage(tmp_path):
    root = _cgroup(tmp_path, {"memory.max": str(2 * GIB), "memory.current": str(GIB // 2)})
    assert cgroup_room(root) == GIB + GIB // 2


def test_cgroup_v1_limit_minus_usage(tmp_path):
    root = _cgroup(tmp_path, {"memory/memory.limit_in_bytes": str(4 * GIB),
                              "memory/memory.usage_in_bytes": str(3 * GIB)})
    assert cgroup_room(root) == GIB


def test_no_limit_is_no_room_figure(tmp_path):
    assert cgroup_room(_cgroup(tmp_path, {"memory.max": "max",
                                          "memory.current": "123"})) is None
    v1 = tmp_path / "v1"
    assert cgroup_room(_cgroup(v1, {"memory/memory.limit_in_bytes": str(1 << 63),
                                    "memory/memory.usage_in_bytes": "5"})) is None
    assert cgroup_room(str(tmp_path / "absent")) is None


def test_a_tight_cgroup_is_what_is_available(tmp_path):
    root = _cgroup(tmp_path, {"memory.max": str(GIB), "memory.current": str(GIB - 4096)})
    assert available_bytes(root) == 4096


def test_without_a_cgroup_the_host_figure_stands(tmp_path):
    measured = available_bytes(str(tmp_path / "absent"))
    host = psutil.virtual_memory().available
    assert abs(measured - host) < 0.1 * host  # two readings of a moving figure
