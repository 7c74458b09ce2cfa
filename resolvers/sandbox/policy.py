"""The Constitution: a default-deny permission gate for commands.

A command is allowed only if every rule positively allows it: its binary is on the
allowlist, it is an argv array (never a shell string), its working directory is inside
the workspace, its limits are within the policy's, and it asks for the network only for
granted hosts (every one it names). A refusal carries a reason code and never runs anything.

What a command may touch once it runs is not decided here by reading its arguments: the
sandbox mounts only the allowed programs, the runtime they need and the command's own
workspace (layout.py, runner.py), so every path and every program it starts, directly
or through an interpreter, is held to the same rule.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from resolvers.sandbox.proxy import admits


class Reason(StrEnum):
    # refusals (decided before running)
    BINARY_NOT_ALLOWED = "BINARY_NOT_ALLOWED"
    NOT_AN_ARGV = "NOT_AN_ARGV"
    CWD_OUTSIDE_WORKSPACE = "CWD_OUTSIDE_WORKSPACE"
    NETWORK_NOT_GRANTED = "NETWORK_NOT_GRANTED"
    LIMIT_ABOVE_POLICY = "LIMIT_ABOVE_POLICY"
    ISOLATION_UNAVAILABLE = "ISOLATION_UNAVAILABLE"
    # containment (enforced while running)
    TIMEOUT = "TIMEOUT"
    CPU_LIMIT = "CPU_LIMIT"
    OUTPUT_LIMIT = "OUTPUT_LIMIT"
    PROCESS_LIMIT = "PROCESS_LIMIT"
    MEMORY_LIMIT = "MEMORY_LIMIT"
    DISK_LIMIT = "DISK_LIMIT"


DEFAULT_BINARIES = ("python3", "ls", "cat", "head", "tail", "wc", "grep", "sort",
                    "diff", "echo", "true", "false", "mkdir", "rm", "cp", "mv", "touch")
DEFAULT_ENV = ("LANG", "LC_ALL", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE")
# What the sandbox's Python can import besides the standard library: the kernel's test
# runner and what it requires.
DEFAULT_PACKAGES = ("pytest",)


class Registry(BaseModel):
    """Where a repository's dependencies may come from: the hosts its setup run may reach
    (the only network it has; none granted, no setup runs), the index pip reads, the CA
    bundle it trusts instead of its own (a private index, a TLS-intercepting proxy), and
    what the setup run may use."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hosts: tuple[str, ...] = ()
    index_url: str = "https://pypi.org/simple"
    cert: str | None = None  # a PEM file on the host, copied into the setup run
    max_wall_seconds: float = Field(default=600.0, gt=0)
    max_workspace_bytes: int = Field(default=2 << 30, gt=0)
    max_workspace_files: int = Field(default=200_000, gt=0)
    max_file_bytes: int = Field(default=512 << 20, gt=0)
    max_tmp_bytes: int = Field(default=1 << 30, gt=0)
    max_memory_bytes: int = Field(default=2 << 30, gt=0)

    @model_validator(mode="after")
    def _index_is_granted(self) -> Registry:
        if self.hosts:
            parsed = urlparse(self.index_url)
            if parsed.scheme != "https" or not parsed.hostname:
                raise ValueError(f"the index {self.index_url!r} is not an https URL (the "
                                 "sandbox's proxy carries TLS only)")
            if not admits(self.hosts, parsed.hostname, parsed.port or 443):
                raise ValueError(f"the index {self.index_url!r} is not on one of the "
                                 f"registry's hosts {list(self.hosts)}")
        return self


class Constitution(BaseModel):
    """The policy. Everything not granted here is denied."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    binaries: tuple[str, ...] = DEFAULT_BINARIES
    python_packages: tuple[str, ...] = DEFAULT_PACKAGES
    env_allowlist: tuple[str, ...] = DEFAULT_ENV
    network_hosts: tuple[str, ...] = ()
    max_wall_seconds: float = Field(default=60.0, gt=0)
    max_cpu_seconds: int = Field(default=60, gt=0)
    max_output_bytes: int = Field(default=1 << 20, gt=0)
    max_memory_bytes: int = Field(default=1 << 30, gt=0)
    max_processes: int = Field(default=64, gt=0)
    max_file_bytes: int = Field(default=64 << 20, gt=0)
    # For the whole sandbox, all its processes together (see runner.py for how).
    max_workspace_bytes: int = Field(default=256 << 20, gt=0)
    max_workspace_files: int = Field(default=10_000, gt=0)
    max_tmp_bytes: int = Field(default=128 << 20, gt=0)
    max_shm_bytes: int = Field(default=64 << 20, gt=0)
    max_open_files: int = Field(default=256, ge=32)
    max_connections: int = Field(default=16, gt=0)
    # A repository's setup run (its dependencies installed) is held to this, not to the
    # grants above: ``setup_policy`` is the policy it runs under.
    registry: Registry = Registry()

    def setup_policy(self) -> Constitution:
        """The policy of a dependency install: this one, with the registry's hosts as its
        only network grant, pip importable, and the registry's larger room and time."""
        registry = self.registry
        return self.model_copy(update={
            "network_hosts": registry.hosts,
            "python_packages": tuple(dict.fromkeys((*self.python_packages, "pip"))),
            "max_wall_seconds": registry.max_wall_seconds,
            "max_cpu_seconds": max(self.max_cpu_seconds, int(registry.max_wall_seconds)),
            "max_workspace_bytes": registry.max_workspace_bytes,
            "max_workspace_files": registry.max_workspace_files,
            "max_file_bytes": registry.max_file_bytes,
            "max_tmp_bytes": registry.max_tmp_bytes,
            "max_memory_bytes": registry.max_memory_bytes})


class CommandRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    argv: list[str] = Field(min_length=1)
    cwd: str = "."
    env: dict[str, str] = Field(default_factory=dict)
    timeout: float | None = Field(default=None, gt=0)
    network_hosts: tuple[str, ...] = ()  # each must be granted by the policy
    stdin: str | None = None

    @field_validator("argv", mode="before")
    @classmethod
    def _argv_is_a_list(cls, value: object) -> object:
        if isinstance(value, str):
            raise ValueError("a command is an argv list, never a shell string")
        return value


class Decision(BaseModel):
    model_config = ConfigDict(frozen=True)

    allowed: bool
    reason: Reason | None = None
    detail: str = ""
    binary: str | None = None
    cwd: str | None = None
    relative_cwd: str = "."
    env: dict[str, str] = Field(default_factory=dict)
    dropped_env: list[str] = Field(default_factory=list)
    timeout: float = 0.0


_SHELL_META = set(";|&$`<>(){}*?~\n")


def decide(policy: Constitution, request: CommandRequest, workspace: Path) -> Decision:
    """Allow or refuse; pure apart from resolving the working directory on disk."""
    root = workspace.resolve()

    def refuse(reason: Reason, detail: str) -> Decision:
        return Decision(allowed=False, reason=reason, detail=detail)

    name = request.argv[0]
    if len(request.argv) == 1 and (" " in name or _SHELL_META & set(name)):
        return refuse(Reason.NOT_AN_ARGV, f"{name!r} looks like a shell string; pass argv items")
    if "/" in name:
        return refuse(Reason.BINARY_NOT_ALLOWED, "binaries are named, not given by path")
    if name not in policy.binaries:
        return refuse(Reason.BINARY_NOT_ALLOWED, f"{name!r} is not on the allowlist")
    cwd = _inside(root, request.cwd)
    if cwd is None:
        return refuse(Reason.CWD_OUTSIDE_WORKSPACE, f"cwd {request.cwd!r} leaves the workspace")
    refused_hosts = [host for host in request.network_hosts if host not in policy.network_hosts]
    if refused_hosts:
        return refuse(Reason.NETWORK_NOT_GRANTED, f"no network grant for {refused_hosts[0]!r}")
    timeout = request.timeout or policy.max_wall_seconds
    if timeout > policy.max_wall_seconds:
        return refuse(Reason.LIMIT_ABOVE_POLICY,
                      f"timeout {timeout}s is above the policy's {policy.max_wall_seconds}s")
    env = {k: v for k, v in request.env.items() if k in policy.env_allowlist}
    for key in policy.env_allowlist:
        if key not in env and key in os.environ:
            env[key] = os.environ[key]
    dropped = sorted(set(request.env) - set(env))
    return Decision(allowed=True, binary=name, cwd=str(cwd),
                    relative_cwd=str(cwd.relative_to(root)), env=env, dropped_env=dropped,
                    timeout=timeout)


def _inside(root: Path, candidate: str) -> Path | None:
    """The resolved directory (symlinks followed) if it stays inside ``root``, else None."""
    path = Path(candidate)
    resolved = (path if path.is_absolute() else root / path).resolve()
    return resolved if resolved == root or root in resolved.parents else None
