# feedcensus: the two commands a newcomer needs are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint setup clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,notebooks,bench]'
	touch $(STAMP)

setup: $(STAMP)

## Set everything up, serve the bundled demo web on 127.0.0.1, crawl it, print the survey.
demo: $(STAMP)
	$(BIN)/feedcensus demo --out demo-out

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## Run the test suite (pytest's exit code 5, "no tests collected", counts as a failure).
test: $(STAMP)
	bash scripts/test.sh

clean:
	rm -rf $(VENV) demo-out .pytest_cache .ruff_cache
