"""What the kernel asks proposals of: a model adapter, a script, the sandbox, a person."""

from __future__ import annotations

from typing import Protocol

from kernel.protocol.requests import Estimate, Resolution, ResolveRequest


class Proposer(Protocol):
    """A source of untrusted proposals.

    One whose answer depends on the request and its occurrence alone, and that can be
    asked from another thread, says so with a class attribute ``prefetchable = True``:
    the kernel may then ask it for a goal's next call while other goals take their
    steps (``kernel.runtime.calls``). A person is never asked ahead."""

    source: str

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate: ...

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution: ...
