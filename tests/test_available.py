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


def test_a_cgroup_cpu_quota_caps_the_usable_cpus(tmp_path):
    """A container's --cpus 1.5 (cgroup v2 "150000 100000") gives 2 CPUs to plan
    workers on, whatever the affinity mask says; v1's quota and period files the same;
    "max" and v1's -1 are no quota."""
    from flake8_dlworker.platforms import cgroup_cpus, usable_cpus

    v2 = _cgroup(tmp_path / "v2", {"cpu.max": "150000 100000"})
    assert cgroup_cpus(v2) == 2
    assert usable_cpus(v2) == min(2, usable_cpus(str(tmp_path / "none")))
    v1 = _cgroup(tmp_path / "v1", {"cpu/cpu.cfs_quota_us": "50000",
                                   "cpu/cpu.cfs_period_us": "100000"})
    assert cgroup_cpus(v1) == 1 and usable_cpus(v1) == 1
    assert cgroup_cpus(_cgroup(tmp_path / "max", {"cpu.max": "max 100000"})) is None
    assert cgroup_cpus(_cgroup(tmp_path / "v1none", {"cpu/cpu.cfs_quota_us": "-1",
                                                     "cpu/cpu.cfs_period_us": "100000"})) is None
    assert cgroup_cpus(str(tmp_path / "none")) is None
