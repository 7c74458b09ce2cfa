"""The run's calls in flight: model calls and sandbox runs that go out while the kernel
goes on with other goals, bounded per run and per process.

A call asked for ahead of its turn (``kernel.solve.lookahead``) is started here and kept
as a future under its key: the proposer's source, the request's fingerprint and its
occurrence. When the goal's step asks for that call in its turn, the future answers it,
and it is recorded then, in the run's order; so what a run commits never depends on
which call finished first, nor on how many ran at once. A proposer is asked ahead only
if it says its answer depends on the request alone (``prefetchable``).

A call made in its turn runs on the run's own thread, as every call did before; only
calls asked ahead run on threads of their own. At concurrency 1 nothing is asked ahead.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from dataclasses import dataclass

from kernel.errors import ConfigError
from kernel.protocol import Proposer, Resolution, ResolveRequest
from kernel.protocol.deadline import call_deadline
from kernel.runtime import progress

Key = tuple[str, str, int]  # the proposer (its source), the request's fingerprint, its occurrence

MAX_CONCURRENCY = 64
CLEAN_UP_SECONDS = 15.0  # what a stopping run gives the sandbox runs it ended to clean up


def process_limit() -> int:
    """Calls in flight across every run of this process (``KERNEL_MAX_CALLS``)."""
    raw = os.environ.get("KERNEL_MAX_CALLS", "16")
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"KERNEL_MAX_CALLS must be a whole number of calls, not {raw!r}") \
            from None
    if value < 1:
        raise ConfigError(f"KERNEL_MAX_CALLS must be at least 1, not {value}")
    return value


_BOUNDS: list[threading.BoundedSemaphore] = []
_BOUNDS_MADE = threading.Lock()


def _process_bounds() -> tuple[threading.BoundedSemaphore, threading.BoundedSemaphore]:
    """What every run of the process shares: its calls in flight, and its sandbox runs,
    which the machine's cores bound (a sandbox run also counts as a call)."""
    with _BOUNDS_MADE:
        if not _BOUNDS:
            _BOUNDS.extend((threading.BoundedSemaphore(process_limit()),
                            threading.BoundedSemaphore(os.cpu_count() or 1)))
    return _BOUNDS[0], _BOUNDS[1]


def check_concurrency(value: int) -> int:
    """``value`` if it is a concurrency a run can use; otherwise the one-line error."""
    if not 1 <= value <= MAX_CONCURRENCY:
        raise ConfigError(f"--concurrency must be between 1 and {MAX_CONCURRENCY} calls at "
                          f"once, not {value}")
    return value


@dataclass
class _Ahead:
    future: Future[Resolution]
    goal_id: str | None
    operation: str


@dataclass(frozen=True)
class Unused:
    """A call asked ahead that its goal's step did not ask for in its turn."""

    goal_id: str | None
    operation: str
    cost_usd: float  # what it cost (0 when it never went out)


class Calls:
    """The run's calls: at most ``concurrency`` in flight, the ones asked ahead kept
    until their turn."""

    def __init__(self, concurrency: int = 1, deadline: float | None = None) -> None:
        self.concurrency = check_concurrency(concurrency)
        self.deadline = deadline  # the run's wall-time cap (monotonic): every call ends by it
        _process_bounds()  # a bad KERNEL_MAX_CALLS is said before the first call
        # Calls of this run out at once (each runs on a daemon thread of its own: a run
        # stopped by Ctrl-C or SIGTERM does not wait for a model's answer to exit).
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self._running: dict[Future[Resolution], Proposer] = {}
        self._ahead: dict[Key, _Ahead] = {}
        self.asked_ahead = 0  # calls started ahead of their turn
        self.answered_ahead = 0  # of those, the ones their turn used
        self.unused: list[Unused] = []  # the others, dropped
        self._lock = threading.Lock()
        # Who hears of calls started ahead: the watcher of the run, not of the step
        # taken ahead (which tells no one of its moves).
        self.watcher: progress.Watcher | None = None
        # Goals whose next step, taken ahead, wrote before it called: nothing to start
        # until they have taken it (``stepped``).
        self.writes_first: set[str] = set()

    @property
    def ahead(self) -> bool:
        """Whether calls may be asked ahead (more than one may be in flight)."""
        return self.concurrency > 1

    def waiting(self, goal_id: str) -> bool:
        """Whether a call asked ahead for ``goal_id`` waits for its turn."""
        return any(a.goal_id == goal_id for a in self._ahead.values())

    def in_flight(self) -> int:
        """Calls asked ahead that are still out."""
        return sum(not a.future.done() for a in self._ahead.values())

    def stepped(self, goal_id: str) -> None:
        """``goal_id`` took its step: a call asked ahead for it that the step did not use
        is dropped, and its next step may be taken ahead again."""
        self.writes_first.discard(goal_id)
        self.drop(functools.partial(operator.ne, goal_id))

    def start(self, source: Proposer, request: ResolveRequest, fingerprint: str,
              occurrence: int) -> None:
        """Ask ``source`` now for a call the goal's step will make in its turn."""
        key = (source.source, fingerprint, occurrence)
        if key in self._ahead:
            return
        self._ahead[key] = _Ahead(self._submit(source, request, occurrence),
                                  request.goal_id, request.operation)
        self.asked_ahead += 1

    def answer(self, source: Proposer, request: ResolveRequest, fingerprint: str,
               occurrence: int) -> Resolution:
        """The call's answer: the one asked ahead, or asked now (its error raised alike)."""
        started = self._ahead.pop((source.source, fingerprint, occurrence), None)
        if started is not None:
            self.answered_ahead += 1
            return started.future.result()
        # The turn's own call runs on the run's thread, as at concurrency 1 (Ctrl-C,
        # signals and the store's client behave as they always did), in one of its places.
        progress.report("call", request.operation, request.goal_id, _summary(request))
        began, cost = time.monotonic(), None
        try:
            with self._slots:
                answer = _bounded(source, request, occurrence, self.deadline)
            cost = answer.cost_usd
            return answer
        finally:
            progress.report("done", request.operation, request.goal_id, _summary(request),
                            took=time.monotonic() - began, cost_usd=cost)

    def drop(self, keep: Callable[[str | None], bool]) -> None:
        """Drop the calls asked ahead for goals ``keep`` no longer wants (their turn
        passed, or they left the queue): cancelled if they have not gone out; otherwise
        told among the ``unused`` with what they cost once they end (``close`` waits)."""
        for key, started in list(self._ahead.items()):
            if keep(started.goal_id):
                continue
            del self._ahead[key]
            if started.future.cancel():
                self._unused(started, 0.0)
            else:
                started.future.add_done_callback(functools.partial(self._ended, started))

    def _ended(self, started: _Ahead, future: Future[Resolution]) -> None:
        self._unused(started, _cost(future))

    def _unused(self, started: _Ahead, cost: float) -> None:
        with self._lock:
            self.unused.append(Unused(started.goal_id, started.operation, cost))

    def close(self, wait_for_calls: bool = True) -> None:
        """Drop every call asked ahead (at the end of a stretch) and wait for those
        already out, so that ``unused`` holds what each cost. A run stopping on an error
        or Ctrl-C (``wait_for_calls=False``) does not wait for a model's answer; it ends
        the sandbox runs it started and gives them a moment to clean up."""
        self.drop(lambda goal_id: False)
        with self._lock:
            out = dict(self._running)
        if wait_for_calls:
            wait(list(out))
            return
        local = {f: s for f, s in out.items() if s.runs_locally}
        for source in {type(s): s for s in local.values()}.values():
            source.interrupt()
        wait(list(local), timeout=CLEAN_UP_SECONDS)

    def _submit(self, source: Proposer, request: ResolveRequest,
                occurrence: int) -> Future[Resolution]:
        watcher = self.watcher or progress.current()
        future: Future[Resolution] = Future()
        with self._lock:
            self._running[future] = source

        def run() -> None:
            with self._slots:
                if not future.set_running_or_notify_cancel():
                    with self._lock:
                        self._running.pop(future, None)
                    return  # dropped before it went out
                progress.tell(watcher, progress.Event("call", request.operation,
                                                      request.goal_id, _summary(request)))
                began, cost = time.monotonic(), None
                try:
                    answer = _bounded(source, request, occurrence, self.deadline)
                    cost = answer.cost_usd
                    future.set_result(answer)
                except BaseException as exc:  # handed to whoever waits for it
                    future.set_exception(exc)
                finally:
                    with self._lock:
                        self._running.pop(future, None)
                    progress.tell(watcher, progress.Event(
                        "done", request.operation, request.goal_id, _summary(request),
                        took=time.monotonic() - began, cost_usd=cost))

        threading.Thread(target=run, name=f"kernel-call-{request.operation}",
                         daemon=True).start()
        return future


def _summary(request: ResolveRequest) -> str | None:
    """The goal's short name, as the request carries it (for the progress lines)."""
    summary = request.payload.get("goal_summary")
    return str(summary) if summary else None


def _cost(future: Future[Resolution]) -> float:
    """What a call cost, answered or failed (a failure carries its cost)."""
    error = future.exception()
    if error is None:
        return future.result().cost_usd
    return float(getattr(error, "cost_usd", 0.0) or 0.0)


def _bounded(source: Proposer, request: ResolveRequest, occurrence: int,
             deadline: float | None) -> Resolution:
    """One call under the process's bounds (a sandbox run under the cores' too), to end
    by the run's deadline."""
    calls, cores = _process_bounds()
    with calls, (cores if source.runs_locally else contextlib.nullcontext()), \
            call_deadline(deadline):
        return source.propose(request, occurrence)
