"""Runs what the Constitution allows, contained by bubblewrap (the sandbox Flatpak uses).

Every command runs in its own user, mount, PID, IPC, UTS, cgroup and network namespaces,
with every capability dropped, in a new session, and dies with the kernel:

* it sees a read-only system made of the allowed programs and their runtime only
  (layout.py), its own workspace at /workspace, a private /tmp, a fresh /proc showing
  only its own processes, a minimal /dev; never the user's home, the kernel's data dir,
  the store's socket or another workspace;
* when the kernel runs as root, the command runs as an unprivileged uid of its own
  (one per workspace), so the process limit applies and nothing it writes is root's;
* rlimits (CPU seconds, address space, processes, file size, descriptors), a wall-time
  limit and an output cap stay per process; memory (resident, in the sandbox's tmpfs
  mounts, and in socket and pipe buffers), tasks and the workspace's size are held for
  the sandbox as a whole by the guardian's accounting; /tmp and /dev/shm are
  size-limited tmpfs, /dev and the masks read-only; when the command ends, times out or
  the kernel is interrupted, the PID namespace ends every process it started;
* a seccomp filter (seccomp_filter.py) refuses the system calls a test has no use for,
  the memory stores no limit would see, and signals to the supervisor; the command
  starts in a fresh, empty session keyring;
* bubblewrap runs under a guardian (guardian.py) that ends every process of the sandbox
  once the kernel is gone, even when the kernel is killed while bubblewrap is still
  setting up (before its own ``--die-with-parent`` is armed);
* a network grant opens the granted host names only, through the kernel's CONNECT
  proxy; without a grant the namespace has nothing but loopback;
* a repository's installed dependencies (``dependencies``, a directory the setup run
  filled) are bound read-only at ``DEPS_DIR`` and put on the Python path after the
  kernel's own test runner.

Where bubblewrap is missing or cannot create namespaces, commands are refused
(``ISOLATION_UNAVAILABLE``), never run unisolated.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kernel.errors import KernelError
from resolvers.sandbox import verdicts
from resolvers.sandbox.layout import RUNTIME_DIR, SITE_DIR, Layout, build_layout, staged
from resolvers.sandbox.policy import CommandRequest, Constitution, Decision, Reason, decide
from resolvers.sandbox.proxy import ConnectProxy
from resolvers.sandbox.seccomp_filter import SeccompUnavailable, keyctl_number, program

INSIDE_UID = 1000
WORKSPACE = "/workspace"
PROXY_DIR = "/run/kernel-proxy"
SOCKET_PATH_MAX = 107  # bytes of a Unix socket's path (sun_path, less its NUL)
DEPS_DIR = "/usr/lib/kernel-deps"  # a repository's dependencies, read-only
SANDBOX_UID_BASE = 1 << 30  # root's sandboxes run as uids above this, one per workspace
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; `make` does it)"


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
    report: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.ran and self.reason is None and self.exit_code == 0


class SandboxError(KernelError):
    """The sandbox cannot be set up as asked."""


def default_workspace_root() -> Path:
    """Where workspaces live: a directory of this user's under the temp dir, closed to
    everyone else (root's may be traversed, not listed, by its per-workspace uids)."""
    root = Path(tempfile.gettempdir()) / f"kernel-workspaces-{os.geteuid()}"
    mode = 0o711 if os.geteuid() == 0 else 0o700
    root.mkdir(mode=mode, exist_ok=True)
    info = root.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise SandboxError(f"{root} exists but is not this user's directory: remove it")
    os.chmod(root, mode)
    return root


def remove_leftovers(root: Path, prefix: str) -> int:
    """Delete the workspaces (and report/proxy dirs) whose names start with ``prefix``:
    what a killed run left behind. Returns how many were removed."""
    leftovers = [p for p in root.glob(f"{prefix}*") if p.is_dir()] + \
        [p for p in root.glob(f".{prefix}*") if p.is_dir()]
    for path in leftovers:
        remove_tree(path)
    return len(leftovers)


def sandbox_uid(workspace: Path) -> int | None:
    """The uid a workspace's commands run as when the kernel is root; None otherwise."""
    if os.geteuid() != 0:
        return None
    digest = hashlib.sha256(str(workspace).encode()).digest()
    return SANDBOX_UID_BASE + int.from_bytes(digest[:3], "big")


class Sandbox:
    """A workspace directory plus the policy that governs commands run in it.

    ``home`` is a private directory (0700; as root, owned by the sandbox's uid) that is
    never mounted: the sandbox sees only ``home/workspace``, so whatever modes the
    command sets there (a world-readable tree, a set-uid copy of a program), no other
    user of the host can reach it."""

    def __init__(self, home: Path, policy: Constitution | None = None,
                 dependencies: Path | None = None) -> None:
        self.home = home.resolve()
        self.policy = policy or Constitution()
        self.dependencies = dependencies
        self.uid = sandbox_uid(self.home)
        self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self.uid is not None:
            closed = [p for p in self.home.parents if not p.stat().st_mode & 0o001]
            if closed:
                raise SandboxError(
                    f"workspace {self.home} is not reachable by the sandbox's "
                    f"unprivileged uid ({closed[0]} is closed to others): create it under "
                    f"{default_workspace_root()}")
        os.chmod(self.home, 0o700)
        self.workspace = self.home / "workspace"
        self.workspace.mkdir(mode=0o700, exist_ok=True)

    def decide(self, request: CommandRequest) -> Decision:
        return decide(self.policy, request, self.workspace)

    def run(self, request: CommandRequest) -> RunResult:
        """Run one allowed command contained; refused commands never start."""
        decision = self.decide(request)
        if not decision.allowed:
            return RunResult(ran=False, reason=decision.reason, detail=decision.detail)
        return self._contained(request, decision, list(request.argv), tests=False)

    def run_tests(self, tests: list[str], timeout: float | None = None) -> RunResult:
        """Run the named test files under the kernel's own test supervisor; the verdicts
        come back in ``report``, read from a pipe only the supervisor holds, never from
        the output or from a file the tested code could reach."""
        request = CommandRequest(argv=["python3", *tests], timeout=timeout)
        decision = self.decide(request)
        if not decision.allowed:
            return RunResult(ran=False, reason=decision.reason, detail=decision.detail)
        return self._contained(request, decision, ["python3", *tests], tests=True)

    def remove(self) -> None:
        """Delete the workspace (whatever modes the command left on it)."""
        remove_tree(self.home)

    def _contained(self, request: CommandRequest, decision: Decision, argv: list[str],
                   tests: bool) -> RunResult:
        problem = isolation_problem()
        if problem:
            return RunResult(ran=False, reason=Reason.ISOLATION_UNAVAILABLE, detail=problem)
        if request.network_hosts and "python3" not in self.policy.binaries:
            return RunResult(ran=False, reason=Reason.ISOLATION_UNAVAILABLE,
                             detail="a network grant needs python3 on the allowlist to run "
                                    "the bridge to the kernel's proxy")
        layout = build_layout(self.policy.binaries, self.policy.python_packages,
                              self.uid is not None)
        if argv[0] not in layout.programs:
            return RunResult(ran=False, reason=Reason.BINARY_NOT_ALLOWED,
                             detail=f"{argv[0]!r} is allowed but not installed on this machine")
        with contextlib.ExitStack() as stack:
            extra: list[str] = []
            seccomp_fd = stack.enter_context(_seccomp_program())
            command = [layout.programs[argv[0]], *argv[1:]]
            report = None
            if tests:
                report = _ReportPipe()
                stack.callback(report.close)
                extra += ["--as-pid-1"]  # the supervisor is the namespace's init: no
                # dumpable bubblewrap process stands between it and the tested code
                command = [command[0], "-I", "-S", f"{RUNTIME_DIR}/pytest_launcher.py",
                           str(report.write_end), *command[1:]]
            python_path = SITE_DIR
            if self.dependencies is not None:
                extra += ["--ro-bind", staged(str(self.dependencies), runtime=False)
                          if self.uid is not None else str(self.dependencies), DEPS_DIR]
                python_path = f"{SITE_DIR}:{DEPS_DIR}"
            if request.network_hosts:
                proxy_dir = stack.enter_context(self._scratch("proxy", len("/proxy.sock")))
                stack.enter_context(ConnectProxy(request.network_hosts, proxy_dir, self.uid,
                                                 self.policy.max_connections))
                extra += ["--bind", str(proxy_dir), PROXY_DIR]
                command = [layout.programs["python3"], "-I", "-S",
                           f"{RUNTIME_DIR}/net_bridge.py", *command]
            self._hand_over()
            full = [*bwrap_argv(layout, self.workspace, decision, extra, self.policy,
                                seccomp_fd, python_path), "--", *command]
            try:
                result = self._execute(full, decision, request, report, seccomp_fd)
            finally:
                self._neutralise()
            if report is not None:
                result = result.model_copy(update={"report": report.verdicts()})
            return result

    @contextlib.contextmanager
    def _scratch(self, kind: str, room: int = 0) -> Iterator[Path]:
        """A private directory of the sandbox's for ``kind``, beside its workspace; with
        ``room``, one whose path leaves that many bytes for a name inside it (a socket's
        path is at most 107 bytes), in the system's temporary directory, or /tmp, when
        the sandbox's home is too deep for it."""
        base = self.home
        for deeper in (Path(tempfile.gettempdir()), Path("/tmp")):
            if not room or len(os.fsencode(base)) + len(kind) + 11 + room <= SOCKET_PATH_MAX:
                break
            base = deeper
        path = Path(tempfile.mkdtemp(prefix=f".{kind}-", dir=base))
        if self.uid is not None:
            os.chown(path, self.uid, self.uid)
        try:
            yield path
        finally:
            remove_tree(path)

    def _hand_over(self) -> None:
        """As root, the workspace and everything in it become the sandbox uid's."""
        if self.uid is None:
            return
        for path in [self.home, self.workspace, *self.workspace.rglob("*")]:
            with contextlib.suppress(FileNotFoundError):
                os.lchown(path, self.uid, self.uid)

    def _neutralise(self) -> None:
        """After a run: no set-uid or set-gid file stays, and the workspace is closed
        again (the guardian strips the bits during the run too; this catches a run
        shorter than its interval)."""
        for folder, dirs, files in os.walk(self.workspace):
            for name in [*dirs, *files]:
                path = os.path.join(folder, name)
                with contextlib.suppress(OSError):
                    info = os.lstat(path)
                    if info.st_mode & (stat.S_ISUID | stat.S_ISGID) and \
                            not stat.S_ISLNK(info.st_mode):
                        os.chmod(path, stat.S_IMODE(info.st_mode) & 0o1777)
        with contextlib.suppress(OSError):
            os.chmod(self.workspace, 0o700)

    def _execute(self, argv: list[str], decision: Decision, request: CommandRequest,
                 report: _ReportPipe | None, seccomp_fd: int) -> RunResult:
        policy = self.policy
        start = time.monotonic()
        lifeline_read, lifeline = os.pipe()
        notice_read, notice = os.pipe()
        try:
            handed = [seccomp_fd] + ([report.write_end] if report else [])
            proc = _start_guardian(argv, policy, self.uid, request, lifeline_read,
                                   handed, notice, self._account())
        except BaseException:
            os.close(lifeline)
            os.close(notice_read)
            raise
        finally:
            os.close(lifeline_read)
            os.close(notice)
            if report is not None:
                report.close_write_end()  # only the supervisor in the sandbox holds it now
        with _RUNNING_LOCK:
            _RUNNING.add(proc)
        try:
            out, err, total, reason = _collect(proc, request, policy, start + decision.timeout,
                                               report)
        finally:  # whatever happens to the kernel meanwhile, the sandbox goes with it
            with _RUNNING_LOCK:
                _RUNNING.discard(proc)
            os.close(lifeline)  # the guardian sweeps everything the command started
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
            try:
                exit_code = proc.wait(timeout=_GUARDIAN_GRACE)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                exit_code = proc.wait()
            passed = _read_notice(notice_read)
        seconds = time.monotonic() - start
        stderr_text = err.decode(errors="replace")
        detail = None
        if passed is not None:
            reason, detail = _limit_reason(passed, policy)
        elif reason is None:
            reason = _classify(exit_code, stderr_text)
        return RunResult(
            ran=True, reason=reason, exit_code=exit_code, stdout=out.decode(errors="replace"),
            stderr=stderr_text, output_bytes=total, seconds=seconds,
            containment=_containment(request, self.uid)
            + [f"{k}={v}" for k, v in _limit_summary(policy).items()],
            dropped_env=decision.dropped_env,
            detail=detail if detail is not None else _detail(reason, policy))

    def _account(self) -> dict[str, Any]:
        """What the guardian holds for the whole sandbox (guardian.py, ``account``)."""
        policy = self.policy
        return {"workspace": str(self.workspace), "memory_bytes": policy.max_memory_bytes,
                "tasks": policy.max_processes, "workspace_bytes": policy.max_workspace_bytes,
                "workspace_files": policy.max_workspace_files, "interval": ACCOUNT_INTERVAL,
                "tmpfs": ["/tmp", "/dev/shm"], "file_bytes": policy.max_file_bytes,
                "charges": descriptor_charges()}


class _ReportPipe:
    """The channel from the sandbox's test supervisor to the kernel: a pipe whose write
    end is handed to the supervisor alone, read here with a size cap."""

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()
        self._open_write = True
        self.data = bytearray()
        self.truncated = False

    def take(self, chunk: bytes) -> None:
        if len(self.data) + len(chunk) > verdicts.REPORT_LIMIT:
            self.truncated = True
        else:
            self.data += chunk

    def verdicts(self) -> dict[str, Any]:
        return verdicts.read_verdicts(bytes(self.data), self.truncated)

    def close_write_end(self) -> None:
        if self._open_write:
            os.close(self.write_end)
            self._open_write = False

    def close(self) -> None:
        self.close_write_end()
        with contextlib.suppress(OSError):
            os.close(self.read_end)


def bwrap_argv(layout: Layout, workspace: Path, decision: Decision, extra: list[str],
               policy: Constitution, seccomp_fd: int, python_path: str = SITE_DIR
               ) -> list[str]:
    """The bubblewrap command line up to (not including) the command. Every filesystem
    the sandbox can write to is sized: ``/tmp`` and ``/dev/shm`` are tmpfs of the policy's
    sizes, ``/dev`` itself and the masks are read-only; the system-call filter is read
    from ``seccomp_fd``."""
    bwrap = bwrap_binary()
    assert bwrap is not None
    env = {**decision.env, "PATH": "/usr/bin", "HOME": WORKSPACE, "TMPDIR": "/tmp",
           "PYTHONPATH": python_path, "USER": "sandbox", "LOGNAME": "sandbox"}
    args = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-net", "--unshare-cgroup-try", "--disable-userns", "--die-with-parent",
            "--new-session",
            "--cap-drop", "ALL", "--uid", str(INSIDE_UID), "--gid", str(INSIDE_UID),
            "--hostname", "sandbox", "--clearenv"]
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    args += layout.argv()
    args += ["--bind", str(workspace), WORKSPACE, *extra,
             "--size", str(policy.max_tmp_bytes), "--tmpfs", "/tmp", "--proc", "/proc",
             *_hidden_proc_files(layout), "--dev", "/dev",
             "--size", str(policy.max_shm_bytes), "--tmpfs", "/dev/shm",
             "--remount-ro", "/dev", "--remount-ro", "/", "--seccomp", str(seccomp_fd),
             "--chdir", str(Path(WORKSPACE) / decision.relative_cwd)]
    return args


def _hidden_proc_files(layout: Layout) -> list[str]:
    """/proc/keys and /proc/key-users list the keys of every keyring the uid owns
    (descriptions, not contents); an empty file is mounted over each."""
    empty = layout.source_of(f"{RUNTIME_DIR}/empty")
    return [arg for name in ("keys", "key-users") for arg in ("--ro-bind", empty, f"/proc/{name}")]


def bwrap_binary() -> str | None:
    """bubblewrap, from the system's own directories only (never from PATH)."""
    return shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin")


def isolation_problem() -> str | None:
    """Why sandboxed commands cannot run here, or None when bubblewrap and the
    system-call filter work."""
    return _problem_with(bwrap_binary()) or _filter_problem()


@functools.cache
def _filter_problem() -> str | None:
    try:
        program()
    except SeccompUnavailable as exc:
        return f"{exc}; commands are refused"
    return None


@functools.cache
def _problem_with(bwrap: str | None) -> str | None:
    if bwrap is None:
        return f"bubblewrap (bwrap) is not installed, so commands are refused: {INSTALL_HINT}"
    probe = [bwrap,
             "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
             "--cap-drop", "ALL",
             "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib",
             "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
             "--proc", "/proc", "--dev", "/dev", "/usr/bin/true"]
    try:
        result = subprocess.run(probe, capture_output=True, text=True, timeout=20, check=False,
                                **_identity(SANDBOX_UID_BASE if os.geteuid() == 0 else None))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not be started ({exc}), so commands are refused"
    if result.returncode != 0:
        return (f"bubblewrap cannot create namespaces here ({result.stderr.strip()[:200]}); "
                "commands are refused. Allow unprivileged user namespaces "
                "(sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces)")
    return None


def _identity(uid: int | None) -> dict[str, Any]:
    """As root, bubblewrap itself starts as the sandbox's unprivileged uid (set by
    subprocess in the child, before the limits and the parent-death signal)."""
    if uid is None:
        return {}
    return {"user": uid, "group": uid, "extra_groups": []}


GUARDIAN = Path(__file__).with_name("guardian.py")
_GUARDIAN_GRACE = 10.0  # seconds the guardian gets to sweep before its group is killed


def _start_guardian(argv: list[str], policy: Constitution, uid: int | None,
                    request: CommandRequest, lifeline: int, handed: list[int] | None = None,
                    notice: int | None = None, account: dict[str, Any] | None = None
                    ) -> subprocess.Popen[bytes]:
    """Start bubblewrap under guardian.py, which outlives a killed kernel just long
    enough to end every process of the sandbox (see its docstring for the window) and
    holds the whole sandbox's limits. ``handed``: descriptors bubblewrap keeps."""
    handed = list(handed or [])
    config = {"argv": argv, "lifeline": lifeline, "kernel": os.getpid(), "uid": uid,
              "limits": _rlimits(policy, _nproc_base(uid)), "pass_fds": handed,
              "notice": notice, "account": account, "keyctl": keyctl_number()}
    return subprocess.Popen(
        [sys.executable, "-I", "-S", str(GUARDIAN), json.dumps(config)],
        env={"PATH": "/usr/bin:/bin"}, start_new_session=True,
        pass_fds=(lifeline, *handed, *([notice] if notice is not None else [])),
        stdin=subprocess.PIPE if request.stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _collect(proc: subprocess.Popen[bytes], request: CommandRequest, policy: Constitution,
             deadline: float, report: _ReportPipe | None
             ) -> tuple[bytearray, bytearray, int, Reason | None]:
    if request.stdin is not None and proc.stdin is not None:
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(request.stdin.encode())
            proc.stdin.close()
    out, err, total, reason = bytearray(), bytearray(), 0, None
    assert proc.stdout is not None and proc.stderr is not None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ, out)
        selector.register(proc.stderr, selectors.EVENT_READ, err)
        if report is not None:
            selector.register(report.read_end, selectors.EVENT_READ, report)
        while selector.get_map() and reason is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                reason = Reason.TIMEOUT
                break
            for key, _ in selector.select(timeout=min(remaining, 0.2)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                if isinstance(key.data, _ReportPipe):
                    key.data.take(chunk)
                    continue
                total += len(chunk)
                room = policy.max_output_bytes - (len(out) + len(err))
                key.data.extend(chunk[:max(room, 0)])
                if total > policy.max_output_bytes:
                    reason = Reason.OUTPUT_LIMIT
                    break
    if reason is None:  # output closed: let the command itself finish within its time
        try:
            proc.wait(timeout=max(deadline - time.monotonic(), 0.05))
        except subprocess.TimeoutExpired:
            reason = Reason.TIMEOUT
    return out, err, total, reason


@contextlib.contextmanager
def _seccomp_program() -> Iterator[int]:
    """A descriptor holding the system-call filter, for bubblewrap's ``--seccomp``."""
    fd = os.memfd_create("kernel-sandbox-seccomp", 0)
    try:
        data = memoryview(program())
        while data:
            data = data[os.write(fd, data):]
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)


def descriptor_charges() -> dict[str, int]:
    """What the guardian counts against the memory limit for each open socket or pipe:
    the most its buffers can hold (the filter keeps them at the system's defaults)."""
    def numbers(name: str) -> list[int]:
        try:
            return [int(v) for v in Path(f"/proc/sys/net/{name}").read_text().split()]
        except (OSError, ValueError):
            return []
    unix = 2 * max(numbers("core/wmem_default") or [212992])
    tcp = max(numbers("ipv4/tcp_wmem") or [4 << 20]) + max(numbers("ipv4/tcp_rmem") or [6 << 20])
    return {"unix": unix, "socket": max(tcp, unix), "pipe": 68 << 10}


ACCOUNT_INTERVAL = 0.1  # seconds between the guardian's whole-sandbox measurements
_LIMIT_REASONS = {"memory": Reason.MEMORY_LIMIT, "processes": Reason.PROCESS_LIMIT,
                  "workspace_bytes": Reason.DISK_LIMIT, "workspace_files": Reason.DISK_LIMIT}


def _read_notice(fd: int) -> dict[str, Any] | None:
    """The limit the guardian ended the sandbox for, if it did (written before it ends)."""
    try:
        os.set_blocking(fd, False)
        data = os.read(fd, 4096)
    except OSError:
        data = b""
    finally:
        os.close(fd)
    try:
        notice = json.loads(data) if data else None
    except ValueError:
        return None
    return notice if isinstance(notice, dict) and notice.get("limit") in _LIMIT_REASONS \
        else None


def _limit_reason(notice: dict[str, Any], policy: Constitution) -> tuple[Reason, str]:
    limit, measured = notice["limit"], notice.get("measured")
    allowed = {"memory": (policy.max_memory_bytes, "bytes of memory"),
               "processes": (policy.max_processes, "processes and threads"),
               "workspace_bytes": (policy.max_workspace_bytes, "bytes in the workspace"),
               "workspace_files": (policy.max_workspace_files, "files in the workspace")}
    cap, unit = allowed[limit]
    return _LIMIT_REASONS[limit], (f"the sandbox as a whole passed its limit of {cap} {unit} "
                                   f"(measured {measured}); every process was ended")


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


def _containment(request: CommandRequest, uid: int | None) -> list[str]:
    network = f"network=proxy:{','.join(request.network_hosts)}" if request.network_hosts \
        else "network=isolated"
    return ["sandbox=bubblewrap", "namespaces=user,mount,pid,ipc,uts,net", "capabilities=none",
            "syscalls=filtered", "keyring=fresh", network,
            f"user={'uid:' + str(uid) if uid is not None else 'caller'}"]


def _limit_summary(policy: Constitution) -> dict[str, int]:
    return {"cpu_seconds": policy.max_cpu_seconds, "memory_bytes": policy.max_memory_bytes,
            "processes": policy.max_processes, "file_bytes": policy.max_file_bytes,
            "workspace_bytes": policy.max_workspace_bytes,
            "workspace_files": policy.max_workspace_files, "tmp_bytes": policy.max_tmp_bytes,
            "shm_bytes": policy.max_shm_bytes, "open_files": policy.max_open_files,
            "connections": policy.max_connections}


def _nproc_base(uid: int | None) -> int:
    """RLIMIT_NPROC counts every task of the uid: a caller's own tasks are added to the
    sandbox's allowance (a root sandbox's uid is its own, so it starts at zero)."""
    if uid is not None:
        return 0
    me, count = os.geteuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == me:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
    return count + 1  # the guardian, about to start


def _rlimits(policy: Constitution, nproc_base: int) -> dict[str, list[int]]:
    """The limits bubblewrap's process takes before exec; everything it starts inherits
    them."""
    nproc = nproc_base + policy.max_processes
    return {"RLIMIT_CPU": [policy.max_cpu_seconds, policy.max_cpu_seconds + 1],
            "RLIMIT_AS": [policy.max_memory_bytes, policy.max_memory_bytes],
            "RLIMIT_NPROC": [nproc, nproc],
            "RLIMIT_FSIZE": [policy.max_file_bytes, policy.max_file_bytes],
            "RLIMIT_NOFILE": [policy.max_open_files, policy.max_open_files],
            "RLIMIT_MSGQUEUE": [0, 0],
            "RLIMIT_CORE": [0, 0]}


# The sandboxes this process is running, on whichever thread: a run stopped by Ctrl-C
# ends those its other threads started (``stop_all``), so they clean up before it exits.
_RUNNING: set[subprocess.Popen[bytes]] = set()
_RUNNING_LOCK = threading.Lock()


def stop_all() -> None:
    """End every sandbox this process is running; each run then returns as killed and
    removes what it made, on its own thread."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for proc in running:
        _kill_group(proc)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Last resort when the guardian does not end: it leads its own session, with
    bubblewrap in it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        proc.kill()


def remove_tree(path: Path) -> None:
    """rmtree that first gives back write permission a command may have taken away."""
    if not path.exists():
        return
    for folder, dirs, _ in os.walk(path):
        for name in dirs:
            inner = os.path.join(folder, name)
            if not os.path.islink(inner):
                with contextlib.suppress(OSError):
                    os.chmod(inner, 0o700)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    shutil.rmtree(path, ignore_errors=True)
