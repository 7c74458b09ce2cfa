"""Test commands run for verification: the sandbox as a proposer, one fresh workspace
per request, its report recorded in the ledger like any other proposal. A repository's
installed dependencies are kept under the data dir (``DEPENDENCY_CACHE``), by the hash
of its requirements."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from kernel.core.artifacts import BlobStore
from kernel.core.run import Run
from kernel.proposals import fingerprint
from kernel.protocol import Estimate, Proposer, Resolution, ResolveRequest
from kernel.protocol.resolver_ids import CODEX_ID
from kernel.protocol.resolver_set import SandboxPolicy, Workspace
from kernel.protocol.test_runs import runs_in
from kernel.runtime.installed import resolvers
from kernel.runtime.kernel import SolveConfig

DEPENDENCY_CACHE = "dependencies"


class SandboxSite(Protocol):
    """What a run's sandbox workspaces are laid out from (the run's context has it all):
    the run, whose id names each workspace; the directory they go in; the sandbox's
    policy; and when the run started with its settings, for the wall-time cap every
    command stops at."""

    @property
    def run(self) -> Run: ...

    @property
    def workspace_root(self) -> Path: ...

    @property
    def policy(self) -> SandboxPolicy: ...

    @property
    def started(self) -> float: ...

    @property
    def config(self) -> SolveConfig: ...


class VerificationSite(SandboxSite, Protocol):
    """A sandbox site, with the blob store beside which a repository's installed
    dependencies are kept (verification's test runs install them; a tool's never do)."""

    @property
    def blobs(self) -> BlobStore: ...


def deadline(site: SandboxSite) -> float:
    """When the run's wall-time cap ends every command it runs in the sandbox."""
    return site.started + site.config.max_wall_seconds


class SandboxProposer(Proposer):
    """Runs commands for verification in a fresh sandbox workspace per request."""

    source = CODEX_ID
    prefetchable = True  # a report depends on the commands and files it is given alone
    runs_locally = True  # on this machine's cores

    def __init__(self, site: VerificationSite) -> None:
        self.site = site

    def _tools(self, request: ResolveRequest, occurrence: int) -> Workspace:
        # named by the request, not by when it runs: it may run ahead of its turn
        site = self.site
        name = f"{site.run.run_id.removeprefix('run:')}-{request.goal_id[-10:]}-" \
               f"{fingerprint(request)[:12]}-{occurrence}"
        return resolvers().sandbox.workspace(
            site.workspace_root / name, site.policy, deadline(site),
            site.config.sandbox_run_usd, site.blobs.root.parent / DEPENDENCY_CACHE)

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
        runs = runs_in(request.payload)
        return Estimate(cost_usd=self.site.config.sandbox_run_usd * runs, seconds=5.0 * runs)

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        return self._tools(request, occurrence).resolve(request)

    def interrupt(self) -> None:
        """The run is stopping: end its sandboxes now (each cleans up after itself)."""
        resolvers().sandbox.stop_all()
