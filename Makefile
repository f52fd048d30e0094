# Two entry points: `make demo` (the main job) and `make test` (the whole test suite).
VENV := .venv
STAMP := $(VENV)/.kgteam-installed

.PHONY: demo test lint bench

$(STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/kgteam demo

test: $(STAMP)
	bash scripts/system-deps.sh
	$(VENV)/bin/ruff check kgteam tests benchmarks examples
	$(VENV)/bin/pytest -n 2

lint: $(STAMP)
	$(VENV)/bin/ruff check kgteam tests benchmarks examples
