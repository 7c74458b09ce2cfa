"""The CONNECT proxy behind a network grant: the sandbox's only way out, admitting the
granted host names and nothing else.

It listens on a unix socket that is mounted into the sandbox, where a bridge
(runtime/net_bridge.py) exposes it as 127.0.0.1:3128. A grant is a host name (ports 80
and 443) or ``host:port``; the name the client asks for must match a grant exactly
(case aside), so an address or another name is refused with 403.

What the sandbox can make the kernel hold is bounded: a few connections at once (one
thread each), a tunnel silent both ways for ``idle_seconds`` closed, the other way of a
tunnel one side has closed given ``HALF_CLOSED_SECONDS`` to finish, and the record of
refused targets kept to the first ``REFUSED_KEPT``, each cut to ``TARGET_CHARS``, with a
count of them all.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import cast

HEAD_LIMIT = 8192
DEFAULT_PORTS = (80, 443)
DEFAULT_MAX_CONNECTIONS = 16
IDLE_SECONDS = 60.0  # a tunnel with no byte either way for this long is closed
HALF_CLOSED_SECONDS = 5.0  # once one side has closed, what the other has to finish
REFUSED_KEPT = 32
TARGET_CHARS = 200


def admits(grants: Iterable[str], host: str, port: int) -> bool:
    """Whether a grant covers ``host:port``."""
    host = host.lower().rstrip(".")
    for grant in grants:
        name, _, fixed = grant.lower().partition(":")
        if name == host and (port == int(fixed) if fixed else port in DEFAULT_PORTS):
            return True
    return False


class ConnectProxy:
    """A threaded CONNECT proxy on ``directory/proxy.sock`` for the run of one command.

    At most ``max_connections`` are open at once (one thread each in the kernel); one
    more is answered 503 and closed at once, without a thread, so a sandbox cannot make
    the kernel hold thousands of idle connections."""

    def __init__(self, grants: Iterable[str], directory: Path, owner: int | None = None,
                 max_connections: int = DEFAULT_MAX_CONNECTIONS,
                 idle_seconds: float = IDLE_SECONDS) -> None:
        self.grants = tuple(grants)
        self.directory = directory
        self.socket_path = directory / "proxy.sock"
        self.owner = owner
        self.idle_seconds = idle_seconds
        self.refused: list[str] = []  # the first REFUSED_KEPT targets, each cut short
        self.refused_count = 0
        self.over_limit = 0
        self._slots = threading.BoundedSemaphore(max_connections)
        self._server: socket.socket | None = None

    def __enter__(self) -> ConnectProxy:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(self.socket_path))
        if self.owner is not None:
            os.chown(self.socket_path, self.owner, self.owner)
            os.chown(self.directory, self.owner, self.owner)
        server.listen(16)
        self._server = server
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._server is not None:
            with contextlib.suppress(OSError):
                self._server.shutdown(socket.SHUT_RDWR)
            self._server.close()
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()

    def _accept(self) -> None:
        assert self._server is not None
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                self.over_limit += 1
                with contextlib.closing(client):
                    _reply(client, "503 Too Many Connections")
                continue
            threading.Thread(target=self._handle, args=(client,), daemon=True).start()

    def _handle(self, client: socket.socket) -> None:
        try:
            self._serve(client)
        finally:
            self._slots.release()

    def _serve(self, client: socket.socket) -> None:
        with contextlib.closing(client):
            client.settimeout(10)
            head = b""
            with contextlib.suppress(OSError):
                while b"\r\n\r\n" not in head and len(head) < HEAD_LIMIT:
                    chunk = client.recv(1024)
                    if not chunk:
                        break
                    head += chunk
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            parts = line.split()
            if len(parts) < 2 or parts[0] != "CONNECT":
                return _reply(client, "405 Method Not Allowed")
            host, _, port_text = parts[1].rpartition(":")
            if not port_text.isdigit() or not admits(self.grants, host, int(port_text)):
                self._note_refused(parts[1])
                return _reply(client, "403 Forbidden")
            try:
                upstream = socket.create_connection((host, int(port_text)), timeout=10)
            except OSError:
                return _reply(client, "502 Bad Gateway")
            with contextlib.closing(upstream):
                _reply(client, "200 Connection Established")
                rest = head.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in head else b""
                with contextlib.suppress(OSError):
                    if rest:
                        upstream.sendall(rest)
                    _tunnel(client, upstream, self.idle_seconds)

    def _note_refused(self, target: str) -> None:
        self.refused_count += 1
        if len(self.refused) < REFUSED_KEPT:
            self.refused.append(target[:TARGET_CHARS])


def _reply(client: socket.socket, status: str) -> None:
    with contextlib.suppress(OSError):
        client.sendall(f"HTTP/1.1 {status}\r\n\r\n".encode())


def _tunnel(client: socket.socket, upstream: socket.socket, idle_seconds: float) -> None:
    """Carry bytes both ways on this one thread until both sides have closed, nothing
    has moved for ``idle_seconds``, or one side closed ``HALF_CLOSED_SECONDS`` ago. A
    send that cannot go out within ``idle_seconds`` (a peer that stopped reading) ends
    the tunnel too."""
    peer = {client: upstream, upstream: client}
    for side in peer:
        side.settimeout(idle_seconds)
    with selectors.DefaultSelector() as selector:
        for side in peer:
            selector.register(side, selectors.EVENT_READ)
        deadline = time.monotonic() + idle_seconds
        half_closed = False
        while selector.get_map():
            ready = selector.select(timeout=max(deadline - time.monotonic(), 0.0))
            if not ready:
                return  # silent for too long, or the other side never finished
            for key, _ in ready:
                source = cast(socket.socket, key.fileobj)
                data = source.recv(65536)
                if data:
                    peer[source].sendall(data)
                else:
                    selector.unregister(source)
                    with contextlib.suppress(OSError):
                        peer[source].shutdown(socket.SHUT_WR)
                    half_closed = True
            wait = HALF_CLOSED_SECONDS if half_closed else idle_seconds
            deadline = time.monotonic() + min(wait, idle_seconds)
