import sys
from pathlib import Path

# tests/ holds small helpers (fixture_markers, spawn_run) imported by the tests
sys.path.insert(0, str(Path(__file__).resolve().parent))

pytest_plugins = ["pytester"]
