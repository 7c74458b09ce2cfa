"""The proposer behind ``--proposer anthropic``: live proposals from claude-code-0, with
retryable errors retried with backoff. It belongs to the resolver it drives; the
kernel sees only the ``Proposer`` protocol."""

from __future__ import annotations

from collections.abc import Sequence

from kernel.protocol import (
    BACKOFF_SECONDS,
    Estimate,
    Proposer,
    Resolution,
    ResolveRequest,
    ResolverError,
    RetryClock,
    with_retries,
)
from resolvers.claude.adapter import ClaudeCode


class ClaudeProposer(Proposer):
    """Live proposals from claude-code-0, with retryable errors retried with backoff; what
    the failed tries cost is added to the answer (or to the error that ends them)."""

    kind = "anthropic"
    prefetchable = True  # an answer depends on its request alone: it may be asked ahead

    def __init__(self, claude: ClaudeCode, delays: Sequence[float] = BACKOFF_SECONDS) -> None:
        self.claude = claude
        self.source = claude.id
        self.model = str(getattr(claude, "model", claude.id))
        self.delays = delays
        # One clock for the run's calls: a rate limit met by one pauses all of them.
        self.clock = RetryClock()

    @property
    def identity(self) -> str:
        """What answers: this adapter and the model it asks."""
        settings = getattr(self.claude, "settings", None)
        return f"{self.source}:{getattr(settings, 'model', self.model)}"

    def reuse_key(self, request: ResolveRequest, occurrence: int) -> str | None:
        """The request as the model would see it, byte for byte (its occurrence does not
        change what is sent); None for an adapter that cannot say."""
        keyed = getattr(self.claude, "request_key", None)
        return f"{self.identity}:{keyed(request)}" if keyed is not None else None

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
        return self.claude.estimate_cost_time(request)

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        spent = [0.0, 0.0]

        def once() -> Resolution:
            try:
                return self.claude.resolve(request)
            except ResolverError as exc:
                spent[0] += exc.cost_usd
                spent[1] += exc.seconds
                exc.cost_usd, exc.seconds = spent[0], spent[1]
                raise

        resolution = with_retries(once, self.delays, clock=self.clock)
        return resolution.model_copy(update={"cost_usd": resolution.cost_usd + spent[0],
                                             "seconds": resolution.seconds + spent[1]})
