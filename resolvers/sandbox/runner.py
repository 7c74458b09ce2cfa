"""Runs what the Constitution allows, contained.

* no network: the command runs in a fresh network namespace (``unshare --net``, or a user
  namespace as well when not root) unless the policy granted its host;
* an unprivileged user: when the kernel runs as root, the command runs as ``nobody``
  (``setpriv``), so it cannot read the operator's files and process limits apply;
* resource limits (rlimits): CPU seconds, address space, processes, file size;
* a wall-time limit and an output cap, enforced by killing the whole process group;
* an environment reduced to the allowlist: API keys never reach it.

If network isolation cannot be set up, commands that did not get a network grant are
refused (default deny), not run unisolated.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import selectors
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from kernel.errors import KernelError
from resolvers.sandbox.policy import CommandRequest, Constitution, Decision, Reason, decide

NOBODY = 65534


class RunResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    ran: bool
    reason: Reason | None = None
    detail: str = ""
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    output_bytes: int = 0
    seconds: float = 0.0
    containment: list[str] = Field(default_factory=list)
    dropped_env: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.ran and self.reason is None and self.exit_code == 0


class SandboxError(KernelError):
    """The sandbox cannot be set up as asked."""


def default_workspace_root() -> Path:
    """Where workspaces live: under the temp dir, which the unprivileged user can traverse."""
    root = Path(tempfile.gettempdir()) / f"kernel-workspaces-{os.getuid()}"
    root.mkdir(mode=0o711, exist_ok=True)
    return root


class Sandbox:
    """A workspace directory plus the policy that governs commands run in it."""

    def __init__(self, workspace: Path, policy: Constitution | None = None) -> None:
        self.workspace = workspace.resolve()
        self.policy = policy or Constitution()
        self.workspace.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            blocked = [p for p in self.workspace.parents if not p.stat().st_mode & 0o001]
            if blocked:
                raise SandboxError(
                    f"workspace {self.workspace} is not reachable by the unprivileged user "
                    f"({blocked[0]} is closed to others): create it under "
                    f"{default_workspace_root()}")
            os.chown(self.workspace, NOBODY, NOBODY)

    def decide(self, request: CommandRequest) -> Decision:
        return decide(self.policy, request, self.workspace)

    def run(self, request: CommandRequest) -> RunResult:
        decision = self.decide(request)
        if not decision.allowed:
            return RunResult(ran=False, reason=decision.reason, detail=decision.detail)
        isolate = request.network_host is None
        prefix, containment = _wrapper(isolate)
        if prefix is None:
            return RunResult(ran=False, reason=Reason.ISOLATION_UNAVAILABLE,
                             detail="network namespaces are unavailable on this machine")
        if os.geteuid() == 0:
            _hand_to_nobody(self.workspace)
        argv = [*prefix, decision.binary, *request.argv[1:]]
        return self._execute(argv, decision, request, containment)

    def _execute(self, argv: list[str], decision: Decision, request: CommandRequest,
                 containment: list[str]) -> RunResult:
        policy = self.policy
        start = time.monotonic()
        proc = subprocess.Popen(
            argv, cwd=decision.cwd, env=decision.env, start_new_session=True,
            stdin=subprocess.PIPE if request.stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=functools.partial(_limits, policy),
        )
        if request.stdin is not None and proc.stdin is not None:
            try:
                proc.stdin.write(request.stdin.encode())
                proc.stdin.close()
            except BrokenPipeError:
                pass
        out, err, total, reason = bytearray(), bytearray(), 0, None
        selector = selectors.DefaultSelector()
        assert proc.stdout is not None and proc.stderr is not None
        selector.register(proc.stdout, selectors.EVENT_READ, out)
        selector.register(proc.stderr, selectors.EVENT_READ, err)
        deadline = start + decision.timeout
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                reason = Reason.TIMEOUT
                break
            for key, _ in selector.select(timeout=min(remaining, 0.2)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                total += len(chunk)
                room = policy.max_output_bytes - (len(out) + len(err))
                key.data.extend(chunk[:max(room, 0)])
                if total > policy.max_output_bytes:
                    reason = Reason.OUTPUT_LIMIT
                    break
            if reason:
                break
        if reason is None:  # output closed: let the command itself finish within its time
            try:
                proc.wait(timeout=max(deadline - time.monotonic(), 0.05))
            except subprocess.TimeoutExpired:
                reason = Reason.TIMEOUT
        _kill_group(proc)  # whatever it left running in its group goes too
        selector.close()
        exit_code = proc.wait()
        seconds = time.monotonic() - start
        stderr_text = err.decode(errors="replace")
        if reason is None:
            reason = _classify(exit_code, stderr_text)
        return RunResult(
            ran=True, reason=reason, exit_code=exit_code, stdout=out.decode(errors="replace"),
            stderr=stderr_text, output_bytes=total, seconds=seconds,
            containment=containment + [f"{k}={v}" for k, v in _limit_summary(policy).items()],
            dropped_env=decision.dropped_env,
            detail=_detail(reason, policy),
        )


def _classify(exit_code: int, stderr: str) -> Reason | None:
    if exit_code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        return Reason.CPU_LIMIT
    if "Resource temporarily unavailable" in stderr or "BlockingIOError" in stderr:
        return Reason.PROCESS_LIMIT
    if "MemoryError" in stderr or "Cannot allocate memory" in stderr:
        return Reason.MEMORY_LIMIT
    return None


def _detail(reason: Reason | None, policy: Constitution) -> str:
    return {
        Reason.TIMEOUT: f"killed after {policy.max_wall_seconds}s of wall time (or the request's)",
        Reason.OUTPUT_LIMIT: f"killed after {policy.max_output_bytes} bytes of output",
        Reason.CPU_LIMIT: f"CPU limit of {policy.max_cpu_seconds}s reached",
        Reason.PROCESS_LIMIT: f"process limit of {policy.max_processes} reached",
        Reason.MEMORY_LIMIT: f"memory limit of {policy.max_memory_bytes} bytes reached",
    }.get(reason, "") if reason else ""


def _limit_summary(policy: Constitution) -> dict[str, int]:
    return {"cpu_seconds": policy.max_cpu_seconds, "memory_bytes": policy.max_memory_bytes,
            "processes": policy.max_processes, "file_bytes": policy.max_file_bytes}


def _limits(policy: Constitution) -> None:
    """Runs in the child before exec: rlimits are inherited by everything it starts."""
    resource.setrlimit(resource.RLIMIT_CPU, (policy.max_cpu_seconds, policy.max_cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (policy.max_memory_bytes, policy.max_memory_bytes))
    resource.setrlimit(resource.RLIMIT_NPROC, (policy.max_processes, policy.max_processes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (policy.max_file_bytes, policy.max_file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _hand_to_nobody(workspace: Path) -> None:
    for path in [workspace, *workspace.rglob("*")]:
        with contextlib.suppress(FileNotFoundError):
            os.lchown(path, NOBODY, NOBODY)


@functools.cache
def _wrapper(isolate: bool) -> tuple[list[str] | None, list[str]]:
    """The command prefix that contains a run, and what it contains; None if isolation
    was asked for but is unavailable."""
    prefix: list[str] = []
    containment: list[str] = []
    if isolate:
        unshare = _which("unshare")
        candidates = [[unshare, "--net"]] if os.geteuid() == 0 else \
            [[unshare, "--net", "--map-root-user"]]
        works = [c for c in candidates if unshare and _probe([*c, "/bin/true"])]
        if not works:
            return None, []
        prefix += works[0]
        containment.append("network=isolated")
    if os.geteuid() == 0:
        setpriv = _which("setpriv")
        if setpriv is None:
            return None, []
        prefix += [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
        containment.append("user=nobody")
    return prefix, containment


def _which(name: str) -> str | None:
    for folder in ("/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        candidate = Path(folder) / name
        if candidate.exists():
            return str(candidate)
    return None


def _probe(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
