"""What the sandbox's CONNECT proxy can be made to hold in the kernel is bounded: refused
targets (long host names, thousands of them), tunnels opened and closed to a granted
host that never speaks, and tunnels that stay silent."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from resolvers.sandbox.proxy import REFUSED_KEPT, TARGET_CHARS, ConnectProxy


@pytest.fixture
def silent_host() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts and never says a word: its port."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=2)
        for conn in held:
            conn.close()
        server.close()


def _connect(proxy: ConnectProxy, target: str) -> tuple[socket.socket, bytes]:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(10)
    client.connect(str(proxy.socket_path))
    with contextlib.suppress(BrokenPipeError):  # a 503 closes before reading the request
        client.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    return client, client.recv(1024)


def test_refused_targets_are_kept_bounded(tmp_path: Path) -> None:
    with ConnectProxy(["example.org"], tmp_path) as proxy:
        for number in range(300):
            client, answer = _connect(proxy, f"{number}{'x' * 7000}.example:443")
            client.close()
            assert answer.startswith(b"HTTP/1.1 403")
    assert proxy.refused_count == 300
    assert len(proxy.refused) == REFUSED_KEPT
    assert max(len(target) for target in proxy.refused) <= TARGET_CHARS


def _tunnel_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.daemon and t.is_alive())


@pytest.mark.slow
def test_tunnels_to_a_host_that_never_speaks_leave_no_thread(tmp_path: Path,
                                                               silent_host: int) -> None:
    """Tunnels opened and closed by the client for a while: the threads they hold never
    pass the proxy's connection limit, and each ends within the half-closed grace; none
    is left blocked on the silent host."""
    before = _tunnel_threads()
    opened, most = 0, 0
    with ConnectProxy([f"127.0.0.1:{silent_host}"], tmp_path, max_connections=8) as proxy:
        until = time.monotonic() + 8
        while time.monotonic() < until:
            client, answer = _connect(proxy, f"127.0.0.1:{silent_host}")
            client.close()
            opened += answer.startswith(b"HTTP/1.1 200")
            most = max(most, _tunnel_threads() - before)
            time.sleep(0.05)
        time.sleep(6)  # the half-closed grace (5 s) and then some
        left = _tunnel_threads() - before
    assert opened >= 16, opened
    assert most <= 8 + 3, most  # one thread a tunnel, the accept loop, the host's own
    assert left <= 3, left


def test_a_silent_tunnel_is_closed(tmp_path: Path, silent_host: int) -> None:
    with ConnectProxy([f"127.0.0.1:{silent_host}"], tmp_path, idle_seconds=1.0) as proxy:
        client, answer = _connect(proxy, f"127.0.0.1:{silent_host}")
        assert answer.startswith(b"HTTP/1.1 200"), answer
        began = time.monotonic()
        assert client.recv(1) == b""  # the proxy closed it
        assert time.monotonic() - began < 5
        client.close()
