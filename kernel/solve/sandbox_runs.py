"""Test commands run for verification: the sandbox as a proposer, one fresh workspace
per request, its report recorded in the ledger like any other proposal."""

from __future__ import annotations

from kernel.protocol import Estimate, Resolution, ResolveRequest
from kernel.runtime.kernel import Kernel
from resolvers.codex_tools import RESOLVER_ID as CODEX_ID
from resolvers.codex_tools import CodexTools


class SandboxProposer:
    """Runs commands for verification in a fresh sandbox workspace per request."""

    source = CODEX_ID

    def __init__(self, k: Kernel) -> None:
        self.k = k

    def _tools(self, request: ResolveRequest) -> CodexTools:
        name = f"{self.k.run.run_id.removeprefix('run:')}-{request.goal_id[-10:]}-" \
               f"{self.k.run.proposals:05d}"
        return CodexTools(self.k.workspace_root / name, self.k.policy,
                          deadline=self.k.started + self.k.config.max_wall_seconds)

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
        commands = max(len(request.payload.get("commands", [])), 1)
        return Estimate(cost_usd=0.01 * commands, seconds=5.0 * commands)

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        return self._tools(request).resolve(request)
