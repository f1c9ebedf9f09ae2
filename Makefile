# Two entry points from a fresh clone (see README):
#   make lesson   -> installs into .venv, runs lesson 00 on the built-in corpus (default backend)
#   make test     -> installs into .venv, runs the whole suite once per backend (tensorflow, jax, torch)
VENV   ?= .venv
PYTHON ?= python3
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.kerasattn-installed

.PHONY: install lesson test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned: the CPU build. An unpinned torch pulls a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[all,dev]"
	touch $(STAMP)

install: $(STAMP)

lesson: $(STAMP)
	$(VENV)/bin/kerasattn lesson 0

test: $(STAMP)
	$(PY) tools/test_all_backends.py

bench: $(STAMP)
	$(PY) tools/run_benchmarks.py

clean:
	rm -rf $(VENV) outputs
