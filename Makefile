# For a fresh machine: `make run` (install, start the app); the tests in three tiers (README: Tests):
# `make check` after every change (lint and every test that needs no browser, server or encoder:
# about a minute), `make test` before pushing (everything, the big matrices as a sample: about 23
# minutes), `make ci` in CI (`make test` and the full matrices).
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PYTEST := $(PY) -m pytest
# Why a test is slow, by marker (pyproject.toml; tests/conftest.py refuses an unmarked one):
# browser (Chromium), server (a real server), encoder (ffmpeg, long GIFs), apptest (pages in
# AppTest: `sample` picks a few for the quick tier), install (pip: the wheel, an installed
# convviz), full (left to CI: the rest of a matrix `make test` samples, the hall's kill tests,
# the measuring scripts' own runs, a fresh venv's `pip install .`), kernel (a Jupyter kernel runs a
# notebook), jupyter (a Jupyter server).
SLOW := browser or server or encoder or apptest or install or supervisord or netns or podman or debootstrap or kernel or jupyter
QUICK := (not ($(SLOW))) or sample
# what `make test` leaves to CI
CI_ONLY := full
# pytest keeps its rewritten test modules in __pycache__: a rerun skips rewriting them again
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run lint check test ci install chromium nginx bench load hall hall-stop hall-status memory image image-run

# The environment, and convviz installed into it editable (`import convviz` and `python -m convviz`
# from any folder); made again when a requirement or pyproject.toml changes. A checkout that
# borrows another's .venv or node_modules (a link) leaves them as that checkout installed them.
$(STAMP): requirements.txt requirements-dev.txt package-lock.json pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	@if [ ! -L $(VENV) ]; then \
	  PYTHONWARNINGS=ignore $(PY) -m pip install --quiet --no-deps --no-build-isolation --editable .; fi
	@# Biome, the JavaScript's linter (package.json); tests/test_js.py skips it where npm is missing
	@if command -v npm >/dev/null && [ ! -L node_modules ]; then npm ci --no-audit --no-fund --silent; fi
	touch $(STAMP)

install: $(STAMP)

# Debian's Chromium for the browser tests and image export (never `playwright install`).
chromium:
	@test -x /usr/bin/chromium || { \
	  SUDO=$$(command -v sudo >/dev/null && [ "$$(id -u)" != 0 ] && echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium fonts-liberation >/dev/null; }

# Debian's nginx for the lecture hall (deploy/hall.py) and its tests.
nginx:
	@test -x /usr/sbin/nginx || { \
	  SUDO=$$(command -v sudo >/dev/null && [ "$$(id -u)" != 0 ] && echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nginx >/dev/null; }

run: $(STAMP)
	$(VENV)/bin/streamlit run app.py --browser.gatherUsageStats false

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# No Chromium, apt or sudo: the venv alone. Properties try fewer examples (tests/quick.py).
check: lint
	CONVVIZ_HYPOTHESIS=check $(PYTEST) -n auto -q -m "$(QUICK)"

# Everything but the browser in parallel; then the browser tests in one process (one server, one
# Chromium). A run that collects no test fails (pytest's exit code 5 is not masked).
test: lint chromium nginx
	$(PYTEST) -n auto -m "not browser and not ($(CI_ONLY))" --durations=10
	$(PYTEST) -m "browser and not ($(CI_ONLY))" --durations=20

# CI (.ci/run): `make test`, then the image (`make image`: podman, runc and debootstrap
# installed when missing, the Debian base made once a machine), then what `make test` leaves
# out: the rest of the full matrices (every preset × page × size in Chromium), the hall's kill
# tests and smoke load, the image run, the hosts in network namespaces.
ci: test image
	$(PYTEST) -m "$(CI_ONLY)"

bench: $(STAMP)
	$(PY) -m convviz.bench

# The lecture-hall load test (scripts/load.py): a class exploring, 10, then 50 sessions (arriving
# within 10 s) for 60 s each against one process, then the same 50 on a bare page (the floor).
load: $(STAMP)
	$(PY) scripts/load.py --sessions 10; status=$$?; \
	$(PY) scripts/load.py --sessions 50 --arrive 10 || status=1; \
	$(PY) scripts/load.py --bare --sessions 50 --arrive 10 || status=1; exit $$status

# A lecture hall: nginx on $(HALL_ADDRESS):$(HALL_PORT) in front of $(HALL_PROCESSES) Streamlit processes
# (deploy/hall.py; its files in deploy/run/). It prints the address students open and keeps the
# processes running; `make hall-stop` stops them all, `make hall-status` says how they are.
HALL_PROCESSES ?= $(shell nproc)
HALL_ADDRESS ?= 127.0.0.1
HALL_PORT ?= 8080
hall: $(STAMP) nginx
	$(PY) deploy/hall.py start --daemon --processes $(HALL_PROCESSES) --address $(HALL_ADDRESS) --port $(HALL_PORT)

hall-stop:
	$(PY) deploy/hall.py stop

hall-status:
	$(PY) deploy/hall.py status

# One process's peak memory over 20 of the largest layers (scripts/memory.py): the README's plan.
memory: $(STAMP)
	$(PY) scripts/memory.py

# The container image (deploy/image/): Debian's podman, runc and debootstrap installed when
# missing, the Debian base made once a machine and cached outside the clone (~/.cache/convviz),
# then `podman build`. `make image IMAGE_SAVE=convviz.tar` also writes the file a host loads.
image:
	sh deploy/image/build.sh $(if $(IMAGE_SAVE),--save $(IMAGE_SAVE))

# The image on this host (the cookie secret mounted from ~/.config/convviz/cookie-secret).
IMAGE_ADDRESS ?= 127.0.0.1
IMAGE_PORT ?= 8501
image-run:
	sh deploy/image/run.sh $(IMAGE_ADDRESS) $(IMAGE_PORT)
