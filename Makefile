# Two entry points: `make demo` and `make test`. Both build .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

# Type-checked with --strict: all of referee/ (Dask's and PettingZoo's untyped APIs are allowed
# where they are used: pyproject.toml's mypy overrides).
STRICT := referee

.PHONY: demo test test-fast test-deep lint bench clean system-demo system-test

# The system packages ct-referee uses: bubblewrap (the bots' sandbox: tournaments refuse to run
# without one), uidmap (newuidmap/newgidmap: a referee that is not root runs each bot as one of
# its subordinate uids) and, for the tests, chromium (the report page's browser tests). Installed with
# apt-get when missing and this runs as root; otherwise the line says what to install.
define need
	@missing=""; for p in $(1); do command -v $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	pkgs=$$(echo "$$missing" | sed 's/\bbwrap\b/bubblewrap/; s/\bnewuidmap\b/uidmap/'); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing$$pkgs (apt-get)"; \
	    (apt-get update -qq && apt-get install -y -qq $$pkgs) >/dev/null 2>&1 \
	      || echo "note: could not install$$pkgs"; \
	  else echo "note: install$$pkgs (as root: apt-get install$$pkgs); ct-referee sandbox says what is missing"; fi; \
	fi
endef

system-demo:
	$(call need,bwrap newuidmap)

system-test:
	$(call need,bwrap newuidmap chromium)

$(BIN)/ct-referee: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,rl,distributed]'
	touch $@

# The venv's bin first on PATH, as `. .venv/bin/activate` does: the bots' `python3` is then the
# venv's, which imports the project's rules engine (mc_bot.py needs it; in the sandbox it sees
# only its own folder and the Python it runs on).
demo: system-demo $(BIN)/ct-referee
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/ct-referee tournament tournaments/demo.yaml --fresh

# pytest-xdist's workers: two a CPU for the everyday lane, whose tests mostly wait on bots,
# browsers and clocks (one a CPU left the two cores idle about 40% of the time, measured with
# `time make test` on 2 cores), one a CPU for the fast lane, which only computes. mypy runs beside
# pytest (its output printed after), using the CPU the waiting tests leave. Bytecode is written
# (a shell that sets PYTHONDONTWRITEBYTECODE keeps pytest from caching its rewritten tests: every
# run would pay 4 s a worker to rewrite them again).
CPUS := $(shell nproc 2>/dev/null || echo 2)
WORKERS ?= $(shell echo $$(( $(CPUS) * 2 )))
unexport PYTHONDONTWRITEBYTECODE

# The lanes (pytest markers, registered in pyproject.toml; docs/architecture.md, "Tests", says
# what each holds and how long it takes). `make test`, the everyday lane: ruff, the layers
# (lint-imports: pyproject.toml), mypy --strict, then pytest: the tests, tests/bots excluded,
# and the doctests in referee/, all but the deep lane (the tests marked deep or slow), hypothesis
# with its everyday examples; on WORKERS pytest-xdist workers (above), mypy beside them.
test: system-test $(BIN)/ct-referee
	$(BIN)/ruff check referee tests bots bench
	$(BIN)/lint-imports
	@$(BIN)/mypy --strict $(STRICT) > .mypy.out 2>&1 & mypy=$$!; \
	$(BIN)/pytest -q -n $(WORKERS) --dist worksteal -m "not deep and not slow"; tests=$$?; \
	wait $$mypy; typed=$$?; cat .mypy.out; rm -f .mypy.out; \
	[ $$tests = 0 ] && [ $$typed = 0 ]

# The linters of `make test` alone: ruff, the layers, mypy --strict.
lint: $(BIN)/ct-referee
	$(BIN)/ruff check referee tests bots bench
	$(BIN)/lint-imports
	$(BIN)/mypy --strict $(STRICT)

# The fast lane: no process started (no bot, no CLI, no browser), nothing heavy (the tests
# marked heavy: a second or more of CPU each, run by the everyday lane), under 15 s.
test-fast: $(BIN)/ct-referee
	$(BIN)/pytest -q -n $(CPUS) --dist worksteal -m "not process and not heavy and not deep and not slow"

# The deep lane: what `make test` leaves out (@pytest.mark.deep: statistical runs over many
# sets, the real page-cache and timing-channel audits, long sandbox attacks; @pytest.mark.slow:
# a test of more than a few seconds) and the hypothesis properties again with 20 times the
# everyday examples (CT_TEST_DEEP=1: tests/conftest.py). .ci/run runs `make test`, then this.
test-deep: system-test $(BIN)/ct-referee
	CT_TEST_DEEP=1 $(BIN)/pytest -q -m "deep or slow or hypothesis"

# Every test: the everyday lane, then the deep lane (README's second command; .ci/run runs it).
test-all: test test-deep

# The benchmarks that need data of their own (sets or a games folder: see each one's docstring)
# are left out of the loop.
NEEDS_DATA := bench/luck_fit.py bench/play_sets.py bench/verdicts.py bench/records.py

bench: $(BIN)/ct-referee
	for b in $(filter-out $(NEEDS_DATA),$(wildcard bench/*.py)); do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) results
