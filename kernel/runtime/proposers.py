"""Composing a run's proposer: a script, or Claude through the anthropic SDK, made by the
installed resolvers (``kernel.runtime.installed``). The one place the kernel picks a
proposer by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kernel.errors import ConfigError
from kernel.protocol import Proposer
from kernel.protocol.resolver_set import ModelAccess
from kernel.runtime.inputs import RunInputs
from kernel.runtime.installed import resolvers
from kernel.settings import KernelSettings

PROPOSERS = ("auto", "anthropic", "scripted")


def check_proposer(kind: str) -> str:
    """``kind`` if it names a proposer; otherwise the one-line error saying which do."""
    if kind not in PROPOSERS:
        raise ConfigError(f"--proposer must be one of {', '.join(PROPOSERS)} (or use "
                          "'kernel replay' to replay a recorded run)")
    return kind


def make_proposer(kind: str, script: Path | None, settings: KernelSettings | None = None,
                  core_titles: set[str] | None = None) -> tuple[Proposer, dict[str, Any]]:
    """The proposer and how to find it again on resume. With ``core_titles`` (a new run's
    core constraints) a script's semantic judgments must each name a constraint."""
    check_proposer(kind)
    if kind == "scripted" or (kind == "auto" and script is not None):
        if script is None:
            raise ConfigError("--proposer scripted needs --script FILE "
                              "(examples: seeds/examples/*.script.yaml)")
        path = script.expanduser().resolve()
        return resolvers().scripted(path, core_titles), \
            {"proposer": "scripted", "script": str(path)}
    settings = settings or KernelSettings.load()
    if settings.anthropic_api_key is None:
        raise ConfigError("no ANTHROPIC_API_KEY is set: export it to solve with Claude, or run "
                          "offline with --proposer scripted --script FILE "
                          "(examples in seeds/examples/)")
    access = ModelAccess(model=settings.claude_model, max_retries=settings.claude_sdk_retries,
                         api_key=settings.anthropic_api_key, delays=settings.claude_retry_delays)
    return resolvers().anthropic(access), {"proposer": "anthropic", "model": access.model}


def proposer_from(inputs: RunInputs) -> Proposer:
    """The proposer a run recorded it was started with."""
    if inputs.proposer == "scripted" and inputs.script is not None:
        return make_proposer("scripted", Path(inputs.script))[0]
    return make_proposer("anthropic", None)[0]
