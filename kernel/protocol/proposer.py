"""What the kernel asks proposals of: a model adapter, a script, the sandbox, a person."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from kernel.protocol.requests import Estimate, Resolution, ResolveRequest


class Proposer(Protocol):
    """A source of untrusted proposals: everything the kernel reads of one.

    ``source``, ``estimate`` and ``propose`` are required; every other member has a
    default that an implementation inherits by subclassing ``Proposer`` and overrides
    where it differs."""

    source: str
    # Its answer depends on the request and its occurrence alone, and it may be asked
    # from another thread: the kernel may ask it for a goal's next call while other goals
    # take their steps (``kernel.runtime.calls``). A person is never asked ahead.
    prefetchable: bool = False
    # Its calls use this machine's cores (a sandbox run): they are held to the cores'
    # bound, and ``interrupt`` ends them when a run stops without waiting.
    runs_locally: bool = False
    # What a run records it was started with (``scripted``, ``anthropic``) and the model
    # or script; None: taken from ``source``.
    kind: str | None = None
    model: str | None = None
    # Who answers a person's questions for it (a script's ``intake:``); None: nobody but
    # the terminal or ``kernel hire answer``.
    person: Callable[[dict[str, Any]], Any] | None = None

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate: ...

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution: ...

    @property
    def identity(self) -> str | None:
        """What answers (a script's content, a model), when its earlier answers may be
        reused; None: they may not."""
        return None

    def reuse_key(self, request: ResolveRequest, occurrence: int) -> str | None:
        """The key an earlier answer to ``request`` is found by; None: not reusable."""
        return None

    def interrupt(self) -> None:
        """The run is stopping without waiting: end the calls still running."""
        return None
