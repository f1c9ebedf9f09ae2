# Two entry points from a fresh clone (see README):
#   make lesson   -> installs into .venv, runs lesson 00 on the built-in corpus (default backend)
#   make test     -> installs into .venv, runs the whole suite once per backend (tensorflow, jax, torch)
#   make test-fast -> the quick loop: no lesson runs, no slow or cross-backend tests
#   make bench    -> runs every benchmark in its short mode and prints the figures
#   make notebooks -> the seven lessons as Jupyter / Colab notebooks in outputs/notebooks/
#   make results  -> every lesson on every backend (about 90 minutes), then the README's results table
VENV   ?= .venv
PYTHON ?= python3
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.kerasattn-installed

.PHONY: install lesson test test-fast lint bench notebooks results clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned to 2.13.0. Which build pip installs depends on where it looks: from
	# PyPI on Linux, the CUDA build (several GB of CUDA libraries); the CPU build only where a
	# CPU wheel is configured (PIP_FIND_LINKS, a local index), or already in $(VENV): run
	# `$(PY) -m pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu`
	# first (README, Install) and this line finds 2.13.0+cpu installed.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[all,dev]"
	touch $(STAMP)

install: $(STAMP)

lesson: $(STAMP)
	$(VENV)/bin/kerasattn lesson 0

test: $(STAMP)
	$(PY) tools/test_all_backends.py

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow and not lesson and not cross_backend"

lint: $(STAMP)
	$(VENV)/bin/ruff check .

bench: $(STAMP)
	$(PY) tools/run_benchmarks.py

notebooks: $(STAMP)
	$(VENV)/bin/kerasattn notebook --all --out outputs/notebooks

results: $(STAMP)
	for b in tensorflow jax torch; do for n in 0 1 2 3 4 5 6; do \
	  $(VENV)/bin/kerasattn --backend $$b lesson $$n --out outputs/results/$$b/lesson_0$$n || exit 1; \
	done; done
	$(PY) tools/results_table.py outputs/results

clean:
	rm -rf $(VENV) outputs
