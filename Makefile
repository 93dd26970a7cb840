# Set-up and everyday targets. Each creates or reuses .venv; nothing installed by hand is relied on.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEVSTAMP := $(VENV)/.installed-dev

.PHONY: demo test bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(DEVSTAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(STAMP)

demo: $(STAMP)
	$(BIN)/dse run studies/quickstart.yaml --no-progress
	@echo "results are in results/quickstart/ (report.html, pareto.png, trials.csv, pareto.csv)"
	@echo "open the report: $(abspath results/quickstart/report.html)"

test: $(DEVSTAMP)
	$(BIN)/python -m pytest

# BENCH_ARGS: e.g. "--quick", "--only throughput,runs", "--baseline REF" (see benchmarks/run.py --help)
BENCH_ARGS ?=
bench: $(DEVSTAMP)
	$(BIN)/pip install --quiet -e '.[dev,gp]'
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)

docs: $(DEVSTAMP)
	$(BIN)/python docs/tools/build_technology.py
	$(BIN)/python docs/tools/build_fitting.py
	$(BIN)/python docs/tools/build_validation.py

clean:
	rm -rf results .pytest_cache
