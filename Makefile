# Two entry points: `make demo` and `make test`. Both build .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

# Type-checked with --strict: the functional core (no I/O). The rest of referee/ gets plain mypy.
CORE := $(addprefix referee/,cards.py rules.py protocol.py schedule.py ratings.py verify.py \
	narration.py positions.py faults.py escape.py formats.py stopping.py course.py encoding.py \
	seccomp.py command_hints.py)

.PHONY: demo test lint bench clean

$(BIN)/ct-referee: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,rl,distributed]'
	touch $@

demo: $(BIN)/ct-referee
	$(BIN)/ct-referee tournament tournaments/demo.yaml --fresh

# ruff, mypy, then pytest: the tests, tests/bots excluded, and the doctests in referee/.
test: $(BIN)/ct-referee
	$(BIN)/ruff check referee tests bots bench
	$(BIN)/mypy --strict $(CORE)
	$(BIN)/mypy referee
	$(BIN)/pytest -q

bench: $(BIN)/ct-referee
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) results
