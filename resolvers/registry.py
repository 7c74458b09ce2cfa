"""The shipped resolvers, as the kernel is handed them (``kernel.protocol.resolver_set``):
the one module that names every implementation. The kernel loads it by name at first use
(the ``kernel.resolvers`` entry point, ``kernel.runtime.installed``), never by import."""

from __future__ import annotations

from pathlib import Path

from kernel.core.run import Run
from kernel.protocol import Proposer
from kernel.protocol.resolver_set import (
    ModelAccess,
    Prompt,
    ResolverSet,
    Sandbox,
    SandboxPolicy,
    Workspace,
)
from kernel.settings import KernelSettings
from resolvers.codex_tools import COST_PER_INVOCATION, CodexTools
from resolvers.human import HumanProposer, IntakeHuman
from resolvers.sandbox.policy import Constitution, Registry
from resolvers.sandbox.runner import (
    default_workspace_root,
    isolation_problem,
    remove_leftovers,
    stop_all,
)
from resolvers.sandbox.static_check import check_tool_code
from resolvers.scripted import ScriptedProposer, check_judgments, load_script
from resolvers.self_model import SelfModel


def scripted(path: Path, core_titles: set[str] | None) -> Proposer:
    proposer = ScriptedProposer.from_file(path)
    if core_titles is not None:
        check_judgments(path, proposer.script, core_titles)
    return proposer


def anthropic(access: ModelAccess) -> Proposer:
    # Imported here: the SDK (about 1.7 s of imports) loads only for a run that talks to
    # a model, never for a scripted or replayed one.
    from resolvers.claude.adapter import ClaudeCode, ClaudeSettings
    from resolvers.claude.proposer import ClaudeProposer

    claude = ClaudeSettings(model=access.model, max_retries=access.max_retries,
                            api_key=access.api_key)
    return ClaudeProposer(ClaudeCode(claude), delays=access.delays)


def policy() -> Constitution:
    """The default policy, granting a repository's setup run the package registry the
    settings name (KERNEL_REGISTRY_*: PyPI unless told otherwise) and nothing else."""
    settings = KernelSettings.load()
    ca = settings.registry_ca()
    cert = str(ca) if ca is not None else None
    return Constitution(registry=Registry(hosts=settings.registry_hosts,
                                          index_url=settings.registry_index_url, cert=cert))


def workspace(path: Path, policy: SandboxPolicy, deadline: float | None,
              cost_per_command: float | None, cache_root: Path | None = None) -> Workspace:
    if not isinstance(policy, Constitution):  # held to what it grants, so never a lookalike
        raise TypeError(f"the sandbox runs under its own Constitution, not {type(policy)!r}")
    return CodexTools(path, policy, deadline=deadline,
                      cost_per_command=COST_PER_INVOCATION if cost_per_command is None
                      else cost_per_command, cache_root=cache_root)


def code_problems(source: str) -> list[str]:
    return [str(v) for v in check_tool_code(source)]


def hire_human(run: Run, prompt: Prompt | None) -> Proposer:
    return HumanProposer(run.store, prompt)


def intake_human(run: Run, prompt: Prompt | None) -> Proposer:
    return IntakeHuman(run.store, prompt)


SHIPPED = ResolverSet(
    scripted=scripted, load_script=load_script, anthropic=anthropic,
    hire_human=hire_human, intake_human=intake_human, self_model=SelfModel,
    sandbox=Sandbox(policy=policy, workspace=workspace, default_root=default_workspace_root,
                    remove_leftovers=remove_leftovers, stop_all=stop_all,
                    isolation_problem=isolation_problem, code_problems=code_problems))
