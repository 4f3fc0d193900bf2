# Two entry points: `make demo` and `make test`. Both build .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean

$(BIN)/ct-referee: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,rl]'
	touch $@

demo: $(BIN)/ct-referee
	$(BIN)/ct-referee tournament tournaments/demo.yaml --fresh

test: $(BIN)/ct-referee
	$(BIN)/ruff check referee tests bots bench
	$(BIN)/pytest -q

bench: $(BIN)/ct-referee
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) results
