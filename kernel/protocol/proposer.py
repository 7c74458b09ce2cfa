"""What the kernel asks proposals of: a model adapter, a script, the sandbox, a person."""

from __future__ import annotations

from typing import Protocol

from kernel.protocol.requests import Estimate, Resolution, ResolveRequest


class Proposer(Protocol):
    """A source of untrusted proposals."""

    source: str

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate: ...

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution: ...
