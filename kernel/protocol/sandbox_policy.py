"""The sandbox's policy as data: what a command may use and how much. The kernel reads it
to tell a model what its code may do (the check's contract); the sandbox enforces it
(``resolvers/sandbox``). Everything not granted here is denied."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

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
