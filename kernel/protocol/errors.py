"""How a resolver call fails, and the retry policy for the failures worth retrying.

Errors are classified: a retryable one (network, rate limit, timeout) is retried with
backoff and consumes no attempt unless output was produced (refused credentials stop the
run at once, resumable); a permanent one
(capability mismatch, invalid output) becomes an UNSAT attempt with a failure mode.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from kernel.errors import KernelError


class NoProposalError(KernelError):
    """The proposer has nothing for this request (a scripted run ran out, say)."""

    def __init__(self, message: str, operation: str = "", goal: str = "") -> None:
        super().__init__(message)
        self.operation = operation
        self.goal = goal


class Parked(KernelError):
    """The request has no answer yet (a person has not given it); the goal waits for one."""


class DeadlineReached(KernelError):
    """The run's wall-time cap came while a resolver worked. The work is dropped unrecorded,
    so the run stops where its last commit left it and a resume asks again."""


class EnvironmentFault(KernelError):
    """The machine lacks what a step needs (the sandbox, most often). It is no fault of
    the goal: nothing is recorded, no attempt fails, and the run stops where its last
    commit left it, resumable once the message's remedy is applied."""


class ResolverError(Exception):
    """A call that produced nothing usable. ``cost_usd`` and ``seconds`` are what it
    spent anyway (a provider bills the tokens of an answer that did not validate)."""

    retryable: bool = False

    def __init__(self, message: str, failure_mode: str = "resolver_error",
                 output_produced: bool = False, cost_usd: float = 0.0, seconds: float = 0.0,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.failure_mode = failure_mode
        self.output_produced = output_produced
        self.cost_usd = cost_usd
        self.seconds = seconds
        self.retry_after = retry_after  # what the provider asked us to wait, in seconds


class RetryableError(ResolverError):
    """Network flake, rate limit, timeout: try again later."""

    retryable = True
    backoff = True  # worth trying again within this call, after a delay


class AccessRefused(RetryableError):
    """The provider refused the credentials (401, 403). Asking again now cannot help, so it
    is not retried; the goal is not at fault either, so the run stops where it is and
    resumes once the credentials are fixed."""

    backoff = False


class PermanentError(ResolverError):
    """Capability mismatch, invalid output, refused request: retrying the same call won't help."""


T = TypeVar("T")

BACKOFF_SECONDS: tuple[float, ...] = (1.0, 4.0, 16.0)
MAX_RETRY_AFTER_SECONDS = 120.0


class RetryClock:
    """One clock for every call of a run: a 429 or 529 met by one call holds them all
    until the wait it asked for is over (the provider's Retry-After, or the backoff
    delay), so calls that run side by side pause together instead of each pressing a
    provider that asked for a pause."""

    def __init__(self, sleep: Callable[[float], None] = time.sleep,
                 now: Callable[[], float] = time.monotonic) -> None:
        self._sleep = sleep
        self._now = now
        self._lock = threading.Lock()
        self._until = 0.0

    def hold(self, seconds: float) -> None:
        """No call of the run goes out for ``seconds`` from now (a longer hold stands)."""
        with self._lock:
            self._until = max(self._until, self._now() + seconds)

    def wait(self) -> None:
        """Return once no hold stands (at once when none does)."""
        while True:
            with self._lock:
                until = self._until
            left = until - self._now()
            if left <= 0:
                return
            self._sleep(left)
            with self._lock:
                if self._until <= until:  # no call asked for a longer pause meanwhile
                    return


def with_retries(call: Callable[[], T], delays: Sequence[float] = BACKOFF_SECONDS,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: RetryClock | None = None) -> T:
    """Call, retrying RetryableError after each delay (longer when the error carries a
    provider's retry-after, up to two minutes); the last error propagates, and so does one
    that waiting cannot mend (:class:`AccessRefused`). With a ``clock`` shared by several
    calls, the delay holds all of them, and each waits out any hold before it goes."""
    for delay in delays:
        if clock is not None:
            clock.wait()
        try:
            return call()
        except RetryableError as exc:
            if not exc.backoff:
                raise
            pause = min(max(delay, exc.retry_after or 0.0), MAX_RETRY_AFTER_SECONDS)
            if clock is None:
                sleep(pause)
            else:
                clock.hold(pause)
    if clock is not None:
        clock.wait()
    return call()
