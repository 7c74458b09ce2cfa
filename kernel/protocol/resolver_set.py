"""The resolvers the kernel uses, as it sees them: factories and services it is handed
at start (``kernel.runtime.installed``), never modules it imports. The shipped set is
``resolvers/registry.py``; another is named by the ``kernel.resolvers`` entry point."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import SecretStr

from kernel.protocol.proposer import Proposer
from kernel.protocol.requests import Resolution, ResolveRequest
from kernel.protocol.script_models import Script
from kernel.protocol.self_model import BuildOutlook

if TYPE_CHECKING:
    from kernel.core.budget import Amount
    from kernel.core.run import Run

# A person's answer given now (the terminal, or a script's ``intake:``): the question's
# payload in, the answer out.
Prompt = Callable[[dict[str, Any]], Any]


class Workspace(Protocol):
    """One fresh sandbox workspace answering one request (files, commands, tests)."""

    def resolve(self, request: ResolveRequest) -> Resolution: ...


class SandboxPolicy(Protocol):
    """What the kernel reads of the sandbox's policy (its default-deny ``Constitution``,
    ``resolvers/sandbox/policy.py``): the terms it tells a model its code runs under. The
    kernel hands the policy back to the sandbox whole, never builds one."""

    @property
    def python_packages(self) -> tuple[str, ...]: ...

    @property
    def network_hosts(self) -> tuple[str, ...]: ...

    @property
    def max_wall_seconds(self) -> float: ...

    @property
    def max_memory_bytes(self) -> int: ...

    @property
    def max_processes(self) -> int: ...

    @property
    def max_workspace_bytes(self) -> int: ...

    @property
    def max_workspace_files(self) -> int: ...

    @property
    def max_file_bytes(self) -> int: ...

    @property
    def max_tmp_bytes(self) -> int: ...


class SelfModel(Protocol):
    """The kernel describing itself from the graph: whether it can build a capability."""

    def build_outlook(self, capability: str, modality: str, share: Amount,
                      min_usd: float, min_seconds: float) -> BuildOutlook: ...


@dataclass(frozen=True)
class ModelAccess:
    """What a live model proposer is made with (from the kernel's settings)."""

    model: str
    max_retries: int
    api_key: SecretStr
    delays: tuple[float, ...]


@dataclass(frozen=True)
class Sandbox:
    """Where commands run, contained."""

    policy: Callable[[], SandboxPolicy]  # the default policy, a run's unless it says otherwise
    # A workspace at the path under the policy (one ``policy`` made), ending by the
    # deadline (None: no end), paying the given price per command (None: the sandbox's own),
    # keeping a repository's installed dependencies under the last path (None: it installs
    # none, and a run that needs them is told so).
    workspace: Callable[[Path, SandboxPolicy, float | None, float | None, Path | None],
                        Workspace]
    default_root: Callable[[], Path]  # where workspaces go unless a run says otherwise
    remove_leftovers: Callable[[Path, str], int]  # a killed run's workspaces, by name prefix
    stop_all: Callable[[], None]  # end every command running now (a run stopping)
    isolation_problem: Callable[[], str | None]  # why commands cannot run here (None: they can)
    code_problems: Callable[[str], list[str]]  # why a tool's code would not be run


@dataclass(frozen=True)
class ResolverSet:
    """Every resolver the kernel makes or calls, by what it is for."""

    # A script's proposer; with the core constraints' titles, its judgments are checked
    # to name one each.
    scripted: Callable[[Path, set[str] | None], Proposer]
    load_script: Callable[[Path], Script]
    anthropic: Callable[[ModelAccess], Proposer]  # loads the model SDK only when called
    # A person answering a HIRE request, or an intake question, on the run's store.
    hire_human: Callable[[Run, Prompt | None], Proposer]
    intake_human: Callable[[Run, Prompt | None], Proposer]
    self_model: Callable[[Run], SelfModel]
    sandbox: Sandbox
