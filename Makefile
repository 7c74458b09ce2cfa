# The two commands a newcomer runs (see README):
#   make demo   install everything, then run the main job on the embedded store
#   make test   install everything the tests need, then lint and run the tests
# Installs are stamped, so a second run only does what changed.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The CPU build of torch; elsewhere point pip at your CPU wheel index with
# PIP_TORCH_ARGS='--index-url <index>' (a plain PyPI install may pull a CUDA build).
TORCH_SPEC ?= torch==2.13.0
PIP_TORCH_ARGS ?=

.PHONY: demo test lint bench clean chromium sandbox

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(PIP_TORCH_ARGS) "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet -e ".[test]"
	$(BIN)/python -m embeddings >/dev/null  # the embedding model's ONNX export, made once
	touch $@

tests/cypher_lint/node_modules/.installed: tests/cypher_lint/package-lock.json
	npm ci --prefix tests/cypher_lint --no-audit --no-fund --loglevel=error
	touch $@

# The main job, offline: the kernel solves the design's CSV CLI example with scripted
# proposals; the generated code runs against its tests in the sandbox.
demo: $(BIN)/.installed sandbox
	$(BIN)/kernel db init
	$(BIN)/kernel solve "Build a Python CLI tool that reads a CSV file and outputs the top 10 rows sorted by a user-specified column" \
	  --proposer scripted --script seeds/examples/csv-cli.script.yaml --budget 2 --time 600
	$(BIN)/kernel status
	$(BIN)/kernel plan --example swe-agent --out swe-agent.plan.json
	$(BIN)/kernel check-plan swe-agent.plan.json

# The sandbox that runs generated code is bubblewrap; without it the kernel refuses to
# run commands. Debian's package is installed when it is missing and apt-get can.
sandbox:
	@command -v bwrap >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1 || \
	      { apt-get update -qq >/dev/null && \
	        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; }; }; } || \
	  echo "note: no bubblewrap and no way to install it (apt-get install bubblewrap): the kernel refuses to run generated code"

# The plan report's browser test needs Chromium; Debian's package is installed when it
# is missing and apt-get can (the test is skipped, with its reason, where it cannot).
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
	  echo "note: no Chromium and no way to install it; the report's browser test will be skipped"

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/mypy

test: $(BIN)/.installed tests/cypher_lint/node_modules/.installed sandbox chromium lint
	KERNEL_CHECK_QUERY_COVERAGE=1 KERNEL_REQUIRE_SANDBOX=1 $(BIN)/python -m pytest -m 'slow or not slow'

bench: $(BIN)/.installed
	$(BIN)/kernel bench store

clean:
	rm -rf $(VENV) tests/cypher_lint/node_modules
