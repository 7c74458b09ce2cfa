"""Fixtures: a real embedded server per test session, a fresh graph per test, and Neo4j:
the local server neo4j/ctl.py builds with Maven where Java and Maven exist, else a
testcontainer where Docker exists (skipped, with the reason, where neither does)."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import tempfile
import weakref
from collections.abc import Iterator
from pathlib import Path

import hypothesis
import pytest

# One width whatever runs the suite (a terminal, a pipe, an xdist worker): output is
# folded at it, so what a test expects of the CLI's output must not depend on where the
# suite runs. No COLUMNS while the consoles are made (one made with it keeps that width
# for good); each test then gets 200 (below), and tests of narrow terminals set their own.
os.environ.pop("COLUMNS", None)

from kernel.paths import cypher_dir
from kernel.schema import init_schema
from kernel.settings import KernelSettings
from kernel.store import GraphStore, open_store
from kernel.store.embedded_server import EmbeddedServer
from kernel.store.neo4j_backend import Neo4jStore
from kernel.store.queries import QueryCatalog

# Tests run side by side on a shared two-core machine: how fast an example is generated or
# a case runs says nothing about the property, so neither fails a test. Explicit
# @settings in a test still win where it sets them.
hypothesis.settings.register_profile(
    "suite", deadline=None,
    suppress_health_check=[hypothesis.HealthCheck.too_slow, hypothesis.HealthCheck.data_too_large])
hypothesis.settings.load_profile("suite")

NEO4J_IMAGE = "neo4j:5.26-community"
# A Neo4j server already running (CI's service container) instead of a testcontainer;
# read at import, before any test's environment is cleaned.
_EXTERNAL_NEO4J = (os.environ.get("TEST_NEO4J_URI"), os.environ.get("TEST_NEO4J_PASSWORD"))
_graph_numbers = itertools.count()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (the default, see pyproject.toml): TEST_WORKERS workers (4) for the suite
    or a directory of it; none (one process, no start-up cost) when files or single tests
    are named."""
    named = [a for a in config.args if "::" in a or a.endswith(".py")]
    if config.args_source == pytest.Config.ArgsSource.ARGS and named:
        return 0
    return int(os.environ.get("TEST_WORKERS") or 4)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under xdist (``--dist loadgroup``), the tests of a module that share a module-scoped
    fixture (a venv built, a flywheel solved) stay on one worker, which builds it once; so
    do the Neo4j tests when TEST_NEO4J_URI names one server for all."""
    for item in items:
        if _EXTERNAL_NEO4J[0] and item.get_closest_marker("neo4j"):
            # One server of the user's: its tests empty one graph, so one worker runs them.
            item.add_marker(pytest.mark.xdist_group("neo4j"))
            continue
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else ()
        if any(d[-1].scope in ("module", "class") for d in defs if d):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        _longest_first(items)


def _longest_first(items: list[pytest.Item]) -> None:
    """The slow tests are handed out first, those on Neo4j (the longest: the same work on
    a slower store, or Neo4j's alone) before the others, so the workers do not end with
    one of them running alone while the others have nothing left (the slowest modules
    sort last by name); the fast tests fill the end. A test that is not slow stays after
    every slow one, even in a module that holds slow tests. A module that shares a fixture
    is one xdist group, handed out whole before single tests whatever its place here (its
    fixture is built once); every worker collects, and sorts, the same way."""
    items.sort(key=lambda item: (item.get_closest_marker("slow") is None,
                                 item.get_closest_marker("neo4j") is None))


# -- tests that cannot run beside others -------------------------------------------
# A test marked `alone` measures the machine (host memory growth, timing), which a test on
# another xdist worker would disturb. Every other test holds a shared lock while it runs;
# an `alone` test holds it exclusively. A turnstile taken first gives the exclusive one
# priority, so a stream of shared holders cannot starve it.

def _lock_file(name: str) -> Path:
    """One file per test run, shared by its workers (asked for only under xdist)."""
    return Path("/tmp") / f"kernel-tests-{os.environ['PYTEST_XDIST_TESTRUNUID']}.{name}"


@pytest.fixture(autouse=True)
def _alone_or_shared(request: pytest.FixtureRequest) -> Iterator[None]:
    import fcntl

    marker = request.node.get_closest_marker("alone")
    if marker is not None and not (marker.args or marker.kwargs.get("reason")):
        pytest.fail("@pytest.mark.alone needs its reason: what of the machine it measures")
    if "PYTEST_XDIST_TESTRUNUID" not in os.environ:  # one process: nothing runs beside it
        yield
        return
    with open(_lock_file("turnstile"), "a") as turnstile, open(_lock_file("main"), "a") as main:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(main, fcntl.LOCK_EX if marker is not None else fcntl.LOCK_SH)
        finally:
            if marker is None:
                fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(main, fcntl.LOCK_UN)
            fcntl.flock(turnstile, fcntl.LOCK_UN)


@pytest.fixture(autouse=True)
def _stop_servers_left_in_tmp_path(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that ran ``kernel`` with a data dir under its tmp_path leaves that dir's
    embedded server running (as a person's would); stopped here, so a suite of such tests
    does not end with hundreds of servers."""
    if "tmp_path" not in request.fixturenames:
        yield
        return
    base = str(request.getfixturevalue("tmp_path"))
    yield
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:  # the server titles itself "redis-server unixsocket:DIR/falkordb.sock"
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        found = re.search(r"unixsocket:(\S+)/falkordb\.sock", text)
        if found and Path(found.group(1)).is_relative_to(base):
            socket_dir = Path(found.group(1))
            with contextlib.suppress(Exception):
                EmbeddedServer(socket_dir).stop()


@pytest.fixture(autouse=True)
def _no_user_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the developer's KERNEL_* / NEO4J_* settings; every answer the read
    cache serves is checked against the store (see kernel/store/queries.py)."""
    for name in list(os.environ):
        if name.startswith(("KERNEL_", "NEO4J_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("KERNEL_AUDIT_READ_CACHE", "1")
    monkeypatch.setenv("COLUMNS", "200")
    # `kernel db init` on Neo4j leaves its warm-up out (tests/test_neo4j_warm_up.py has it).
    monkeypatch.setenv("KERNEL_NEO4J_WARM_UP", "0")


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One embedded server for the whole session; stopped at the end."""
    path = tmp_path_factory.mktemp("kernel-data")
    yield path
    EmbeddedServer(path).stop()


def embedded_settings(data_dir: Path, graph_name: str) -> KernelSettings:
    return KernelSettings(graph="embedded", data_dir=data_dir, graph_name=graph_name)


@pytest.fixture
def embedded_store(data_dir: Path) -> Iterator[GraphStore]:
    store = open_store(embedded_settings(data_dir, f"test-{next(_graph_numbers)}"))
    yield store
    store.drop_all()
    store.close()


def _docker_problem() -> str | None:
    try:
        import docker

        docker.from_env().ping()
    except Exception as exc:
        return f"no Docker engine here ({type(exc).__name__})"
    return None


CHECKOUT = Path(__file__).resolve().parent.parent


def worker_number() -> int:
    """This process's pytest-xdist worker (gw0, gw1, ...) as a number; 0 without xdist."""
    return int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)


def neo4j_test_args(worker: int) -> list[str]:
    """The suite's own local server for one worker (neo4j/ctl.py): tests empty its graph, so
    never the user's, and each xdist worker has its own (Community has one user database),
    so workers never empty each other's. Ports: TEST_NEO4J_BOLT_PORT / TEST_NEO4J_HTTP_PORT
    (7688 / 7475) plus the worker's number; homes .neo4j/test, .neo4j/test-1, ..."""
    bolt = int(os.environ.get("TEST_NEO4J_BOLT_PORT") or 7688) + worker
    http = int(os.environ.get("TEST_NEO4J_HTTP_PORT") or 7475) + worker
    home = CHECKOUT / ".neo4j" / ("test" if worker == 0 else f"test-{worker}")
    return ["--home", str(home), "--bolt-port", str(bolt), "--http-port", str(http)]


TEST_NEO4J = neo4j_test_args(worker_number())
# The suite's servers answer many short statements and live minutes, not days, on a
# machine the workers share: the client compiler alone and one GC thread each started a
# server in a quarter of the time and ran the golden histories with less CPU (measured,
# docs/testing.md). The Makefile's neo4j-test gives the first server the same.
TEST_NEO4J_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ParallelGCThreads=1 -XX:ConcGCThreads=1"

if "PYTEST_XDIST_WORKER" in os.environ:
    # Each worker's temporary files apart, its children's included: tests pin the same run
    # ids (the golden histories), and a run clears its killed sandboxes by run id under
    # the temp dir, so two workers sharing one would clear each other's live workspaces.
    _WORKER_TMP = Path(tempfile.gettempdir()) / f"kernel-tests-{os.environ['PYTEST_XDIST_WORKER']}"
    _WORKER_TMP.mkdir(mode=0o755, exist_ok=True)
    os.environ["TMPDIR"] = str(_WORKER_TMP)
    tempfile.tempdir = None  # read TMPDIR again


def _local_neo4j() -> tuple[str, str] | str:
    """Start (or find running) the suite's Neo4j built by Maven; the reason if it cannot."""
    import shutil
    import subprocess
    import sys

    if not (shutil.which("java") or os.environ.get("JAVA_HOME")) or not shutil.which("mvn"):
        return "no Java and Maven here"
    done = subprocess.run([sys.executable, str(CHECKOUT / "neo4j" / "ctl.py"), "start", *TEST_NEO4J],
                          capture_output=True, text=True, check=False,
                          env={"KERNEL_NEO4J_JAVA_OPTIONS": TEST_NEO4J_JAVA_OPTIONS, **os.environ})
    if done.returncode != 0:
        pytest.fail(f"the local Neo4j did not start: {done.stderr.strip()}")
    lines = dict(line.split("=", 1) for line in done.stdout.split())
    return lines["KERNEL_GRAPH"], lines["NEO4J_PASSWORD"]


@contextlib.contextmanager
def _only_session(home: Path) -> Iterator[None]:
    """Tests empty the graph, so two test sessions on one server would empty each other's:
    the second is refused at once, saying why."""
    import fcntl

    with open(home / "suite.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pytest.fail(f"another test session is using the test Neo4j ({home}): wait for it, "
                        "or point this one at another server with TEST_NEO4J_URI")
        yield


@pytest.fixture(scope="session")
def neo4j_server() -> Iterator[tuple[str, str]]:
    """TEST_NEO4J_URI's server; else the local one (Java + Maven); else a testcontainer."""
    uri, password = _EXTERNAL_NEO4J
    if uri:
        yield uri, password or ""
        return
    local = _local_neo4j()
    if not isinstance(local, str):
        with _only_session(Path(TEST_NEO4J[1])):
            yield local
        return
    problem = _docker_problem()
    if problem:
        pytest.skip(f"{local} and {problem}: Neo4j backend tests skipped")
    from testcontainers.neo4j import Neo4jContainer

    with Neo4jContainer(NEO4J_IMAGE, password="kernel-test-password") as container:
        yield container.get_connection_url(), "kernel-test-password"


@pytest.fixture
def neo4j_store(neo4j_server: tuple[str, str]) -> Iterator[GraphStore]:
    uri, password = neo4j_server
    store = Neo4jStore(QueryCatalog(cypher_dir(), "neo4j"), uri, "neo4j", password)
    _NEO4J_ENV[store] = {"KERNEL_GRAPH": uri, "NEO4J_USER": "neo4j",
                         "NEO4J_PASSWORD": password}
    store.drop_all()
    yield store
    store.drop_all()
    store.close()


# Keyed by the store itself, weakly: an id() would outlive its store and could name a
# later embedded store as Neo4j.
_NEO4J_ENV: weakref.WeakKeyDictionary[GraphStore, dict[str, str]] = weakref.WeakKeyDictionary()


def store_env(store: GraphStore, data_dir: Path) -> dict[str, str]:
    """The environment that makes ``kernel ...`` use ``store`` (either backend), with its
    artifacts under ``data_dir``."""
    env = {"KERNEL_DATA_DIR": str(data_dir)}
    if store in _NEO4J_ENV:
        return {**env, **_NEO4J_ENV[store]}
    return {**env, "KERNEL_GRAPH_NAME": str(store.describe()["graph"])}


def store_settings(store: GraphStore, data_dir: Path) -> KernelSettings:
    """Settings that open ``store`` (either backend), artifacts under ``data_dir``."""
    env = store_env(store, data_dir)
    if "KERNEL_GRAPH" in env:
        return KernelSettings(graph=env["KERNEL_GRAPH"], data_dir=data_dir,
                              NEO4J_USER=env["NEO4J_USER"], NEO4J_PASSWORD=env["NEO4J_PASSWORD"])
    return embedded_settings(data_dir, env["KERNEL_GRAPH_NAME"])


BACKENDS = ["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> GraphStore:
    """The same suite runs against each backend."""
    return request.getfixturevalue(f"{request.param}_store")


@pytest.fixture
def initialised(store: GraphStore) -> GraphStore:
    init_schema(store)
    return store


# -- every named statement must be run by the suite ---------------------------------
_RAN: set[str] = set()
_original_run = GraphStore.run


def _recording_run(self, name, params=None, identifiers=None):  # type: ignore[no-untyped-def]
    _RAN.add(name)
    return _original_run(self, name, params, identifiers)


GraphStore.run = _recording_run  # type: ignore[method-assign]


def pytest_testnodedown(node: object, error: object) -> None:
    """Under xdist, the statements each worker ran come back to the controller."""
    _RAN.update(getattr(node, "workeroutput", {}).get("ran_statements", ()))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With KERNEL_CHECK_QUERY_COVERAGE=1 (``make test``), fail a green full run that left
    a statement of the embedded dialect unexercised (checked once, by the controller, over
    what every worker ran)."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand its statements to the controller
        workeroutput["ran_statements"] = sorted(_RAN)
        return
    if os.environ.get("KERNEL_CHECK_QUERY_COVERAGE") != "1" or exitstatus != 0:
        return
    known = set(QueryCatalog(cypher_dir(), "falkordb").names())
    unused = sorted(known - _RAN)
    if unused:
        print(f"\nnamed statements no test ran: {', '.join(unused)}")
        session.exitstatus = 1


@pytest.fixture(autouse=True)
def _no_real_model_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach a real model: building a real Claude client raises."""
    from resolvers.claude import adapter

    monkeypatch.setattr(adapter, "ALLOW_MODEL_REQUESTS", False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


@pytest.fixture(params=BACKENDS)
def initialised_graph(request: pytest.FixtureRequest) -> GraphStore:
    """An initialised graph on each backend: the SOLVE loop, the knowledge graph, analytics,
    planning and graph io run on both (Neo4j where Docker exists)."""
    store: GraphStore = request.getfixturevalue(f"{request.param}_store")
    init_schema(store)
    return store
