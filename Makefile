PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-all record test-pythons bench docs clean

$(BIN)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	@# one command, so that no framework in the dev extras can move the torch pin
	$(BIN)/pip install -q torch==2.13.0 -e '.[dev]'
	@# byte-compiled once, as an installed package is: every run of the doctor, its agent
	@# and each worker import from the checkout (PYTHONDONTWRITEBYTECODE would otherwise
	@# have them compile it from source every time)
	$(BIN)/python -m compileall -q doctor flake8_dlworker > /dev/null
	touch $@

demo: $(BIN)/.installed
	@$(BIN)/python scripts/demo.py

# one more test process than cores: several tests wait on a timeout without using a core;
# --dist worksteal: an idle test process takes tests queued for a busy one
JOBS ?= $(shell $(PY) -c "import os; print((os.cpu_count() or 1) + 1)")

# the fast tier: every test that starts no torch process, the recorded runs replayed
# through the diagnosis, and the few real end-to-end runs marked e2e (tests/tiers.py)
test: $(BIN)/.installed
	$(BIN)/python -m pytest -q -n $(JOBS) --dist worksteal -m "not full or e2e"

# every tier: each fixture and example run for real, patched scripts re-run under spawn;
# the slowest tests are listed at the end, where the tier's time goes
test-all: $(BIN)/.installed
	$(BIN)/python -m pytest -q -n $(JOBS) --dist worksteal --durations=40

# record again the real runs the fast tier replays (the missing and stale ones)
record: $(BIN)/.installed
	$(BIN)/python tests/recordings.py

# the lint side, check and explain on Python 3.9 and 3.13 (venvs of their own, no torch)
test-pythons:
	bash scripts/test_pythons.sh $(PYTHONS)

bench: $(BIN)/.installed
	$(BIN)/python bench/lint_bench.py
	$(BIN)/python bench/check_vs_ruff.py
	$(BIN)/python bench/catalog_import.py
	$(BIN)/python bench/analysis_cost.py
	$(BIN)/python bench/large_module.py
	$(BIN)/python bench/doctor_bench.py
	$(BIN)/python bench/memory_bench.py
	$(BIN)/python bench/explain_bench.py
	$(BIN)/python bench/fixture_bench.py
	$(BIN)/python bench/stderr_bench.py

docs: $(BIN)/.installed
	$(BIN)/python scripts/gen_docs.py

clean:
	rm -rf $(VENV) .venv-* build *.egg-info .pytest_cache
