"""A file lock that every write to one graph passes, so an export can hold the graph
still.

Neither backend gives an export a snapshot: the embedded server has no snapshot
reads, and copying a graph (``GRAPH.COPY``) forks the server, which can block it for
good while another process writes; Neo4j reads at read-committed isolation, so a
transaction of many reads sees the commits landing between them. Each kernel state
change is one statement, so pausing statements between two of them leaves a graph
that is one committed state: writers take the lock shared for one statement (until
its commit is acknowledged); an export takes it exclusive while it reads, and
writers wait. The lock lives in the data directory, which every kernel process of
one deployment shares (the artifacts' contents are there too).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from kernel.paths import private_dir


def graph_lock(data_dir: Path, graph_name: str, purpose: str) -> Path:
    """The lock file for one purpose on one graph of an embedded data dir."""
    digest = hashlib.sha256(graph_name.encode("utf-8")).hexdigest()[:16]
    return data_dir / "locks" / f"{purpose}-{digest}.lock"


class WriteGate:
    """Shared for each write statement, exclusive while an export reads."""

    def __init__(self, data_dir: Path, graph_name: str) -> None:
        self.path = graph_lock(data_dir, graph_name, "writes")
        # One descriptor per thread: flock locks belong to the open file, so threads
        # sharing one would release each other's lock.
        self._local = threading.local()

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Held for one write statement; waits while an export holds the graph."""
        if getattr(self._local, "exclusive", False):
            yield  # this thread paused writes itself; do not wait for itself
            return
        fd = self._descriptor()
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """No process writes this graph until the block ends (in-flight writes finish
        first)."""
        fd = self._descriptor()
        fcntl.flock(fd, fcntl.LOCK_EX)
        self._local.exclusive = True
        try:
            yield
        finally:
            self._local.exclusive = False
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _descriptor(self) -> int:
        fd: int | None = getattr(self._local, "fd", None)
        if fd is None:
            private_dir(self.path.parent)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            self._local.fd = fd
        return fd

    def close(self) -> None:
        """Close this thread's descriptor (others close when their thread's store does)."""
        fd = getattr(self._local, "fd", None)
        if fd is not None:
            os.close(fd)
            self._local.fd = None
