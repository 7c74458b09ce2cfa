"""The Constitution: a default-deny permission gate for commands.

A command is allowed only if every rule positively allows it: its binary is on the
allowlist, it is an argv array (never a shell string), its working directory is inside
the workspace, its limits are within the policy's, and it asks for the network only for
a granted host. A refusal carries a reason code and never runs anything.

What a command may touch once it runs is not decided here by reading its arguments: the
sandbox mounts only the allowed programs, the runtime they need and the command's own
workspace (layout.py, runner.py), so every path and every program it starts, directly
or through an interpreter, is held to the same rule.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator


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


class CommandRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    argv: list[str] = Field(min_length=1)
    cwd: str = "."
    env: dict[str, str] = Field(default_factory=dict)
    timeout: float | None = Field(default=None, gt=0)
    network_host: str | None = None
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
    if request.network_host is not None and request.network_host not in policy.network_hosts:
        return refuse(Reason.NETWORK_NOT_GRANTED, f"no network grant for {request.network_host!r}")
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
