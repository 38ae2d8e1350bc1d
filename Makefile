# Two commands for a fresh machine: `make run` (install, start the app), `make test` (install, lint, every test).
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test install chromium bench load

$(STAMP): requirements.txt requirements-dev.txt package-lock.json
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	@# Biome, the JavaScript's linter (package.json); tests/test_js.py skips it where npm is missing
	@if command -v npm >/dev/null; then npm ci --no-audit --no-fund --silent; fi
	touch $(STAMP)

install: $(STAMP)

# Debian's Chromium for the browser tests and image export (never `playwright install`).
chromium:
	@test -x /usr/bin/chromium || { \
	  SUDO=$$(command -v sudo >/dev/null && [ "$$(id -u)" != 0 ] && echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium fonts-liberation >/dev/null; }

run: $(STAMP)
	$(VENV)/bin/streamlit run app.py --browser.gatherUsageStats false

test: $(STAMP) chromium
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m convviz.bench

# The lecture-hall load test (scripts/load.py): 10, then 50 concurrent sessions for 60 s each.
load: $(STAMP)
	$(PY) scripts/load.py --sessions 10; status=$$?; \
	$(PY) scripts/load.py --sessions 50 && exit $$status
