"""How a resolver call fails, and the retry policy for the failures worth retrying.

Errors are classified: a retryable one (network, rate limit, timeout) is retried with
backoff and consumes no attempt unless output was produced (refused credentials stop the
run at once, resumable); a permanent one
(capability mismatch, invalid output) becomes an UNSAT attempt with a failure mode.
"""

from __future__ import annotations

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


def with_retries(call: Callable[[], T], delays: Sequence[float] = BACKOFF_SECONDS,
                 sleep: Callable[[float], None] = time.sleep) -> T:
    """Call, retrying RetryableError after each delay (longer when the error carries a
    provider's retry-after, up to two minutes); the last error propagates, and so does one
    that waiting cannot mend (:class:`AccessRefused`)."""
    for delay in delays:
        try:
            return call()
        except RetryableError as exc:
            if not exc.backoff:
                raise
            sleep(min(max(delay, exc.retry_after or 0.0), MAX_RETRY_AFTER_SECONDS))
    return call()
