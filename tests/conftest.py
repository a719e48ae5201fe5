import sys
from pathlib import Path

import pytest

# tests/ holds small helpers (fixture_markers, spawn_run) imported by the tests
sys.path.insert(0, str(Path(__file__).resolve().parent))

import tiers  # noqa: E402
from doctor.supervisor import Run  # noqa: E402

pytest_plugins = ["pytester"]


def pytest_configure(config):
    config.addinivalue_line("markers", "%s: starts torch (set at collection, see tests/tiers.py)"
                            % tiers.FULL)
    config.addinivalue_line("markers", "%s: a real end-to-end run kept in the fast tier"
                            % tiers.E2E)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    tiers.mark_items(items)  # before -m selects by the marks
    tiers.frameworks_first(items)


@pytest.fixture(autouse=True)
def _torch_only_where_marked(request):
    tiers.allowed = request.node.get_closest_marker(tiers.FULL) is not None
    yield
    tiers.allowed = True


def _guarded(run):
    def guarded(self, *args, **kwargs):
        if not tiers.allowed:
            raise AssertionError("doctor.supervisor.Run starts torch, but this test was not "
                                 "marked %r at collection (tests/tiers.py)" % tiers.FULL)
        return run(self, *args, **kwargs)
    return guarded


# a run the package starts in this process (pipeline.examine, ...) is held to the tiers too
Run.run = _guarded(Run.run)
