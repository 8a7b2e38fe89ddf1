# gan_sru tasks. Every target sets up the venv first if needed (scripts/bootstrap.sh); on a ready
# machine that costs nothing, because the venv's stamp file is newer than setup.py and the script.
#   make setup       find or install Python 3.9/3.10, create $(VENV), pip install -e '.[dev]'
#   make train       train on the built-in sines (CONFIG=... to pick another config); a second
#                    run continues an interrupted run, or says that it is complete
#   make train-classes  train the conditional demo (configs/sines_classes.yaml: classes + a Markov state)
#   make test        ruff + the full pytest suite, one worker per core, a module's tests on one (what CI runs)
#   make test-fast   the unit tests (tests/unit) without those marked slow: for iterating (CI runs all)
#   make docs        the documentation site (mkdocs.yml, docs/) into site/; warnings are errors
#   make fuzz        the fuzz campaign (tests/fuzz, >= 10,000 inputs) -> benchmarks/results/fuzz_counts.json
VENV ?= .venv
CONFIG ?= configs/sines.yaml
PY := $(VENV)/bin/python
READY := $(VENV)/.gan_sru_ready

.PHONY: setup train train-classes test test-fast lint docs samples bench fuzz clean

# Always runs the script: it only checks the venv when nothing changed.
setup:
	VENV=$(VENV) bash scripts/bootstrap.sh

$(READY): setup.py scripts/bootstrap.sh
	VENV=$(VENV) bash scripts/bootstrap.sh

train: $(READY)
	$(PY) train.py --config $(CONFIG) --resume

train-classes: $(READY)
	$(PY) train.py --config configs/sines_classes.yaml --resume

test: $(READY)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q -n auto --dist loadscope

test-fast: $(READY)
	$(PY) -m pytest -q -m "not slow" tests/unit

lint: $(READY)
	$(VENV)/bin/ruff check .

# The site builds with --strict: a broken link, anchor or reference fails it.
docs: $(READY)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

# Regenerates the pictures the README shows, into samples/.
samples: $(READY)
	$(PY) scripts/make_samples.py

bench: $(READY)
	@set -e; for f in sru_speed profile_reuse scores_over_time read_speed scaling; do echo "== benchmarks/$$f.py"; \
	    $(PY) benchmarks/$$f.py; done

# The fuzz campaign (tests/fuzz, over 10,000 generated inputs: data files, configs, CLI arguments, API calls);
# counts of ran / clear error / other go to benchmarks/results/fuzz_counts.json. CI runs a bounded part.
fuzz: $(READY)
	GAN_SRU_FUZZ=campaign GAN_SRU_FUZZ_COUNTS=benchmarks/results/fuzz_counts.json $(PY) -m pytest -q tests/fuzz

# Removes run folders and caches; keeps the venv.
clean:
	rm -rf runs .pytest_cache .ruff_cache .hypothesis build
	find . \( -path ./.git -o -path ./$(VENV) \) -prune -o -type d -name __pycache__ -exec rm -rf {} +
