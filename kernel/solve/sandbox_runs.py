"""Test commands run for verification: the sandbox as a proposer, one fresh workspace
per request, its report recorded in the ledger like any other proposal. A repository's
installed dependencies are kept under the data dir (``DEPENDENCY_CACHE``), by the hash
of its requirements."""

from __future__ import annotations

from kernel.proposals import fingerprint
from kernel.protocol import Estimate, Proposer, Resolution, ResolveRequest
from kernel.protocol.resolver_ids import CODEX_ID
from kernel.protocol.resolver_set import Workspace
from kernel.protocol.test_runs import runs_in
from kernel.runtime.installed import resolvers
from kernel.runtime.kernel import Kernel

DEPENDENCY_CACHE = "dependencies"


class SandboxProposer(Proposer):
    """Runs commands for verification in a fresh sandbox workspace per request."""

    source = CODEX_ID
    prefetchable = True  # a report depends on the commands and files it is given alone
    runs_locally = True  # on this machine's cores

    def __init__(self, k: Kernel) -> None:
        self.k = k

    def _tools(self, request: ResolveRequest, occurrence: int) -> Workspace:
        # named by the request, not by when it runs: it may run ahead of its turn
        name = f"{self.k.run.run_id.removeprefix('run:')}-{request.goal_id[-10:]}-" \
               f"{fingerprint(request)[:12]}-{occurrence}"
        return resolvers().sandbox.workspace(
            self.k.workspace_root / name, self.k.policy,
            self.k.started + self.k.config.max_wall_seconds, self.k.config.sandbox_run_usd,
            self.k.blobs.root.parent / DEPENDENCY_CACHE)

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
        runs = runs_in(request.payload)
        return Estimate(cost_usd=self.k.config.sandbox_run_usd * runs, seconds=5.0 * runs)

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        return self._tools(request, occurrence).resolve(request)

    def interrupt(self) -> None:
        """The run is stopping: end its sandboxes now (each cleans up after itself)."""
        resolvers().sandbox.stop_all()
