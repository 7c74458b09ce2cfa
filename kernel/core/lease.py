"""One process per run: a lease on the Run node.

A process that drives a run (solve, resume) takes the run's lease in one statement and
renews it from a background thread; it gives it back when it stops, saying why. A lease
whose holder is gone is free: on the same host the holder's pid (and the start time of
that pid, so a recycled pid does not count) tells at once; elsewhere the lease expires
``TTL_SECONDS`` after its last renewal. Lease times are wall-clock and never enter a
decision or the summary hash.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from dataclasses import dataclass
from types import TracebackType

from kernel.core.state_machine import TERMINAL
from kernel.errors import KernelError
from kernel.store.base import GraphStore

TTL_SECONDS = 60.0
RENEW_SECONDS = 15.0
# Runs a Lease object of this process holds right now. A lease the store says this
# process holds, for a run not in here, was left behind when the store went away before
# it could be given back: this process may take it again.
_DRIVING: set[str] = set()
_DRIVING_LOCK = threading.Lock()


class RunBusyError(KernelError):
    """Another live process holds the run's lease."""


@dataclass(frozen=True)
class LeaseState:
    holder: str | None
    expires_ms: int | None
    stopped: str | None

    def alive(self, now_ms: int | None = None) -> bool:
        """Whether the holder is still driving the run."""
        if not self.holder:
            return False
        host, pid, started = self._parts()
        if host == socket.gethostname() and pid.isdigit():
            return _process_start(int(pid)) == started
        now = now_ms if now_ms is not None else _now_ms()
        return (self.expires_ms or 0) > now

    def describe(self) -> str:
        host, pid, _ = self._parts()
        return f"pid {pid} on {host}"

    def _parts(self) -> tuple[str, str, str]:
        """(host, pid, start time of that pid) of a holder written by ``this_process``."""
        host, _, rest = (self.holder or "").partition(":")
        pid, _, started = rest.partition(":")
        return host, pid, started


RESUMABLE = frozenset({"interrupted", "wall-time cap", "model unavailable", "stopped"})


def run_state(root_status: str | None, lease: LeaseState) -> str:
    """How a run stands for a person: its root's status once finished; ``running`` while
    a live process holds it; otherwise why it stopped (``interrupted`` when its process
    was killed or stopped without saying)."""
    if root_status in TERMINAL:
        return str(root_status)
    if lease.alive():
        return "running"
    if lease.stopped in (None, "crashed"):
        return "interrupted"
    return str(lease.stopped)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _expiry() -> int:
    return _now_ms() + int(TTL_SECONDS * 1000)


def _process_start(pid: int) -> str:
    """The start time of ``pid`` in clock ticks since boot ('' if there is no such process)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def this_process() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{_process_start(os.getpid())}"


def lease_state(store: GraphStore, run_id: str) -> LeaseState:
    rows = store.run("run/lease", {"run_id": run_id})
    if not rows:
        return LeaseState(None, None, None)
    row = rows[0]
    return LeaseState(row["holder"], row["expires"], row["stopped"])


class Lease:
    """Holds a run's lease for the duration of a ``with`` block."""

    def __init__(self, store: GraphStore, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.holder = this_process()
        self.stopped: str | None = None  # why the run stopped, recorded on release
        self.ended = False  # the caller saw the run reach an end (resolved, refused, parked)
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def acquire(self) -> None:
        current = lease_state(self.store, self.run_id)
        with _DRIVING_LOCK:
            driving = self.run_id in _DRIVING
        left_behind = current.holder == self.holder and not driving
        if current.alive() and not left_behind:  # (a run has one driver at a time)
            raise RunBusyError(f"{self.run_id} is being driven by {current.describe()}; "
                               "wait for it to finish, or stop that process and run "
                               f"'kernel resume {self.run_id}'")
        taken = self.store.run("run/lease_take", {
            "run_id": self.run_id, "expected": current.holder, "holder": self.holder,
            "expires": _expiry()})
        if not taken:
            now = lease_state(self.store, self.run_id)
            raise RunBusyError(f"{self.run_id} was just taken by {now.describe()}")
        with _DRIVING_LOCK:
            _DRIVING.add(self.run_id)
        self._thread = threading.Thread(target=self._renew, name="run-lease", daemon=True)
        self._thread.start()

    def _renew(self) -> None:
        while not self._done.wait(RENEW_SECONDS):
            with contextlib.suppress(KernelError):  # the store is gone: commits will say so
                self.store.run("run/lease_renew", {"run_id": self.run_id,
                                                   "holder": self.holder, "expires": _expiry()})

    def release(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with _DRIVING_LOCK:
            _DRIVING.discard(self.run_id)
        self.store.run("run/lease_release", {"run_id": self.run_id, "holder": self.holder,
                                             "stopped": self.stopped})

    def __enter__(self) -> Lease:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is not None and issubclass(kind, KeyboardInterrupt):
            self.stopped = "interrupted"
        elif kind is not None and not self.ended and self.stopped is None:
            self.stopped = "crashed"
        try:
            self.release()
        except KernelError:
            if kind is None:
                raise
