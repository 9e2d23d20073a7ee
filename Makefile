# The two commands of the README. Both create .venv when it is missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test bench clean

# checked before the venv exists: a venv made by an older Python would stay behind and
# fail every later run the same way
CHECK_PY = @$(PY) -c 'import sys; v = sys.version_info; sys.exit(None if v >= (3, 11) else "litmus-gate needs Python 3.11 or newer; $(PY) is %d.%d: run make PY=python3.11 (or newer)" % v[:2])'

$(BIN)/python:
	$(CHECK_PY)
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

# The dev extra (inspect-ai, ray, moto, strands-agents, openai-agents, OpenTelemetry) is
# too tangled for pip's resolver from scratch: constraints-dev.txt pins a set known to
# install together (refresh it with `pip freeze` after changing the dev extra).
$(VENV)/.installed-dev: pyproject.toml constraints-dev.txt | $(BIN)/python
	$(BIN)/python -m pip install -q -c constraints-dev.txt -e '.[dev]'
	touch $(VENV)/.installed $@

# an editable install compiles our modules on first import; a shell with
# PYTHONDONTWRITEBYTECODE set would recompile them in every process (about 0.1 CPU s each:
# the driver, every worker, every test's subprocess). Only changed files are compiled.
BYTECODE := $(BIN)/python -m compileall -q pipeline schemas

run: $(VENV)/.installed
	$(BYTECODE)
	$(BIN)/litmus-gate score --out runs/sample --overwrite --summary

# two test processes (pytest-xdist; one on a one-core machine): the suite's pytest takes
# 13-16 min here (clean-clone CI runs of 2026-12-06), about twice that in one
test: $(VENV)/.installed-dev
	$(BYTECODE)
	$(BIN)/python -m pytest -n auto --maxprocesses 2

# Invariant's analyzer needs openai<2 and the dev extra's openai-agents openai>=3: the
# bench has a venv of its own with the package and the bench extra only.
BENCH_VENV := .venv-bench
bench:
	test -x $(BENCH_VENV)/bin/python || { $(subst @,,$(CHECK_PY)) && $(PY) -m venv $(BENCH_VENV); }
	$(BENCH_VENV)/bin/python -m pip install -q -e '.[bench]'
	$(BENCH_VENV)/bin/python -m compileall -q pipeline schemas bench  # see BYTECODE
	$(BENCH_VENV)/bin/python bench/run.py

clean:
	rm -rf $(VENV) $(BENCH_VENV) runs
