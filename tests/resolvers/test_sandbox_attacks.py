"""The sandbox's attack suite: every attack a command can make is contained.

Each attack runs through the real Sandbox (bubblewrap). When the suite runs as root, the
last test runs this same file again as an ordinary user (uid 65534, Debian's python3),
so every attack is checked both ways. The module needs only the sandbox package,
pydantic and pytest, and no conftest, so that second pass can run from a
copy readable by that user.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from resolvers.sandbox import CommandRequest, Constitution, Reason, Sandbox
from resolvers.sandbox.runner import RunResult, SandboxError, default_workspace_root
from resolvers.sandbox.static_check import check_tool_code
from tests.sandbox_support import needs_sandbox, processes_with

SECRET = "operator-secret-7f3a"


@dataclass
class Target:
    """What an attack aims at: the host's files, another run, the store, the kernel."""

    box: Sandbox
    canary_dir: Path
    canary: Path
    world_canary: Path
    other: Sandbox
    store_socket: Path
    store_secret: Path
    token: str

    def py(self, code: str, **kw: object) -> RunResult:
        return self.box.run(CommandRequest(argv=["python3", "-c", textwrap.dedent(code)], **kw))


@pytest.fixture
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    root = default_workspace_root()
    box = Sandbox(root / f"attack-{uuid.uuid4().hex[:10]}",
                  Constitution(max_wall_seconds=20, max_cpu_seconds=10, max_processes=32,
                               network_hosts=("localhost",)))
    other = Sandbox(root / f"victim-{uuid.uuid4().hex[:10]}")
    (other.workspace / "result.txt").write_text("the other run's result")
    canary_dir = tmp_path_factory.mktemp("canary")
    canary = canary_dir / "secret.txt"
    canary.write_text(SECRET)
    open_dir = Path(f"/tmp/kernel-attack-open-{uuid.uuid4().hex[:8]}")
    open_dir.mkdir(mode=0o755)
    world = open_dir / "readable.txt"
    world.write_text(SECRET)
    world.chmod(0o644)
    data_dir = tmp_path_factory.mktemp("data")
    data_dir.chmod(0o700)
    secret = data_dir / "falkordb.secret"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(data_dir / "falkordb.sock"))
    listener.listen(1)
    try:
        yield Target(box, canary_dir, canary, world, other, data_dir / "falkordb.sock", secret,
                     f"tok{uuid.uuid4().hex[:12]}")
    finally:
        listener.close()
        box.remove()
        other.remove()
        shutil.rmtree(open_dir, ignore_errors=True)




def _intact(t: Target) -> None:
    assert t.canary.read_text() == SECRET
    assert t.world_canary.read_text() == SECRET
    assert t.store_secret.read_text() == SECRET
    assert (t.other.workspace / "result.txt").read_text() == "the other run's result"


# -- other programs: directly, by path, through the allowed interpreter ----------------
@needs_sandbox
@pytest.mark.parametrize("argv", [["curl", "http://example.com"], ["bash"], ["/bin/sh"],
                                  ["/usr/bin/python3", "-c", "1"], ["sh", "-c", "id"]])
def test_a_program_not_on_the_list_is_refused(target: Target, argv: list[str]) -> None:
    result = target.box.run(CommandRequest(argv=argv))
    assert (result.ran, result.reason) == (False, Reason.BINARY_NOT_ALLOWED)


@needs_sandbox
@pytest.mark.parametrize("code", [
    "import os; print('rc', os.system('id; echo pwned'))",
    "import subprocess; subprocess.run(['/bin/bash', '-c', 'echo pwned'])",
    "import subprocess; subprocess.run(['/usr/bin/env'])",
    "import os; os.execv('/bin/sh', ['sh', '-c', 'echo pwned'])",
    "import ctypes; libc = ctypes.CDLL(None); "
    "print('rc', libc.execv(b'/bin/sh', (ctypes.c_char_p * 3)(b'sh', b'-c', None)))",
])
def test_the_interpreter_cannot_start_another_program(target: Target, code: str) -> None:
    result = target.py(code)
    assert result.ran and "pwned" not in result.stdout and "uid=" not in result.stdout
    assert result.exit_code != 0 or "rc -1" in result.stdout or "rc 32512" in result.stdout


# -- files outside the workspace ------------------------------------------------------
@pytest.mark.slow
@needs_sandbox
def test_reading_a_canary_outside_fails_every_way(target: Target) -> None:
    (target.box.workspace / "innocent").symlink_to(target.canary)
    (target.box.workspace / "dir").symlink_to(target.canary_dir)
    for argv in (["cat", str(target.canary)], ["cat", "innocent"], ["cat", "./innocent"],
                 ["cat", "dir/secret.txt"], ["cat", str(target.world_canary)],
                 ["grep", "-r", "secret", "/"]):
        result = target.box.run(CommandRequest(argv=argv))
        assert result.ran and SECRET not in result.stdout, argv
    result = target.py(f"""
        import os
        for path in ({str(target.canary)!r}, {str(target.world_canary)!r}, 'innocent'):
            try:
                print(open(path).read())
            except OSError as exc:
                print('blocked', type(exc).__name__)
        os.symlink({str(target.canary)!r}, 'mine')
        try:
            print(open('mine').read())
        except OSError as exc:
            print('blocked', type(exc).__name__)
        try:
            os.link({str(target.canary)!r}, 'hard')
        except OSError as exc:
            print('blocked', type(exc).__name__)
        """)
    assert result.ok and SECRET not in result.stdout and result.stdout.count("blocked") == 5
    _intact(target)


@needs_sandbox
def test_writing_or_deleting_outside_fails(target: Target) -> None:
    for argv in (["rm", "-rf", str(target.canary_dir)], ["rm", "-rf", "/"],
                 ["cp", "/usr/bin/true", str(target.canary)],
                 ["touch", str(target.world_canary.parent / "new")],
                 ["mv", str(target.world_canary), "stolen"]):
        target.box.run(CommandRequest(argv=argv))
    result = target.py(f"""
        import os
        for path in ({str(target.canary)!r}, {str(target.world_canary)!r},
                     '/usr/bin/python3', '/tmp/../usr/lib/x'):
            try:
                open(path, 'w').write('pwned')
                print('wrote', path)
            except OSError as exc:
                print('blocked', type(exc).__name__)
        """)
    assert "wrote /usr" not in result.stdout and str(target.canary) not in result.stdout
    _intact(target)
    assert not (target.world_canary.parent / "new").exists()


@needs_sandbox
def test_world_writable_places_are_private(target: Target) -> None:
    host_file = Path(f"/tmp/kernel-attack-{target.token}")
    result = target.py(f"open('/tmp/kernel-attack-{target.token}', 'w').write('x'); "
                       "import os; print(sorted(os.listdir('/tmp')))")
    assert result.ok and not host_file.exists()
    shared = Path("/dev/shm") / target.token
    target.py(f"open('/dev/shm/{target.token}', 'w').write('x')")
    assert not shared.exists()


@needs_sandbox
def test_the_system_is_read_only_and_shows_only_allowed_programs(target: Target) -> None:
    result = target.py("""
        import os
        print(sorted(os.listdir('/usr/bin')))
        print(sorted(os.listdir('/')))
        try:
            open('/usr/bin/evil', 'w')
        except OSError as exc:
            print('blocked', exc.errno)
        """)
    programs = set(eval(result.stdout.splitlines()[0]))
    assert programs <= set(target.box.policy.binaries), programs
    assert "home" not in result.stdout.splitlines()[1] and "blocked" in result.stdout


@needs_sandbox
def test_another_runs_workspace_is_out_of_reach(target: Target) -> None:
    victim = target.other.workspace
    result = target.py(f"""
        import os
        for action in ('read', 'write', 'list'):
            try:
                if action == 'read':
                    print(open({str(victim / 'result.txt')!r}).read())
                elif action == 'write':
                    open({str(victim / 'result.txt')!r}, 'w').write('tampered')
                else:
                    print(os.listdir({str(victim.parent)!r}))
            except OSError as exc:
                print('blocked', type(exc).__name__)
        """)
    assert result.stdout.count("blocked") == 3, result.stdout
    _intact(target)


# -- the store, the kernel's environment and processes ---------------------------------
@needs_sandbox
def test_the_store_socket_and_secret_are_out_of_reach(target: Target) -> None:
    result = target.py(f"""
        import socket
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect({str(target.store_socket)!r})
            print('connected')
        except OSError as exc:
            print('blocked', type(exc).__name__)
        try:
            print(open({str(target.store_secret)!r}).read())
        except OSError as exc:
            print('blocked', type(exc).__name__)
        """)
    assert result.stdout.count("blocked") == 2 and SECRET not in result.stdout
    _intact(target)


@needs_sandbox
def test_the_parent_environment_and_proc_stay_hidden(target: Target,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", f"sk-ant-{target.token}")
    result = target.py(f"""
        import os
        print(sorted(os.environ))
        seen = []
        for pid in os.listdir('/proc'):
            if pid.isdigit():
                try:
                    seen.append((pid, open(f'/proc/{{pid}}/environ', 'rb').read()))
                except OSError:
                    pass
        print(len([p for p in os.listdir('/proc') if p.isdigit()]))
        print(any(b'{target.token}' in env for _, env in seen))
        try:
            os.kill({os.getpid()}, 0)
            print('signalled')
        except OSError as exc:
            print('blocked', type(exc).__name__)
        """, env={"ANTHROPIC_API_KEY": f"sk-ant-{target.token}"})
    lines = result.stdout.splitlines()
    assert result.ok and target.token not in lines[0] and "ANTHROPIC" not in lines[0]
    assert int(lines[1]) <= 4 and lines[2] == "False"
    assert result.dropped_env == ["ANTHROPIC_API_KEY"]


@needs_sandbox
def test_no_capabilities_and_no_way_back_to_root(target: Target) -> None:
    result = target.py("""
        import os
        status = open('/proc/self/status').read()
        print([l for l in status.splitlines() if l.startswith(('CapEff', 'CapPrm', 'CapBnd'))])
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        def unshare_user():  # a nested user namespace would hand out capabilities again
            if libc.unshare(0x10000000) != 0:
                raise OSError(ctypes.get_errno(), 'unshare')
        for call in (lambda: os.setuid(0), lambda: os.chroot('/tmp'), unshare_user):
            try:
                call()
                print('escalated')
            except OSError as exc:
                print('blocked', exc.errno)
        """)
    assert result.ok and "escalated" not in result.stdout and result.stdout.count("blocked") == 3
    assert result.stdout.count("0000000000000000") == 3


# -- network ---------------------------------------------------------------------------
def _listener() -> tuple[socket.socket, int, list[bytes]]:
    server = socket.create_server(("127.0.0.1", 0))
    got: list[bytes] = []

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = server.accept()
                with conn:
                    got.append(conn.recv(100))
                    conn.sendall(b"hello from the granted host")

    threading.Thread(target=serve, daemon=True).start()
    return server, server.getsockname()[1], got


@needs_sandbox
def test_no_network_without_a_grant(target: Target) -> None:
    server, port, got = _listener()
    try:
        result = target.py(f"""
            import socket
            for family, kind, address in ((socket.AF_INET, socket.SOCK_STREAM, ('127.0.0.1', {port})),
                                          (socket.AF_INET, socket.SOCK_DGRAM, ('192.0.2.1', 53))):
                s = socket.socket(family, kind)
                s.settimeout(2)
                try:
                    s.connect(address)
                    print('connected', address)
                except OSError as exc:
                    print('blocked', exc.errno)
            """)
    finally:
        server.close()
    assert result.ok and "connected" not in result.stdout and got == []
    assert "network=isolated" in result.containment
    refused = target.box.run(CommandRequest(argv=["true"], network_hosts=("example.com",)))
    assert refused.reason == Reason.NETWORK_NOT_GRANTED


@needs_sandbox
def test_a_grant_opens_the_granted_name_only(target: Target) -> None:
    server, port, got = _listener()
    # A home too deep for a socket's path inside it (107 bytes at most): the proxy's
    # socket is made elsewhere and bound in all the same.
    box = Sandbox(default_workspace_root() / f"net-{target.token}-{'deep' * 20}",
                  Constitution(max_wall_seconds=20, network_hosts=(f"localhost:{port}",)))
    try:
        result = box.run(CommandRequest(argv=["python3", "-c", textwrap.dedent(f"""
            import os, socket
            def through_proxy(target):
                s = socket.create_connection(('127.0.0.1', 3128), timeout=5)
                s.sendall(f'CONNECT {{target}} HTTP/1.1\\r\\nHost: {{target}}\\r\\n\\r\\n'.encode())
                head = s.recv(200).decode()
                if ' 200 ' in head:
                    s.sendall(b'hi')
                    return head.split()[1] + ' ' + s.recv(100).decode()
                return head.split()[1]
            print(os.environ['HTTPS_PROXY'])
            print(through_proxy('localhost:{port}'))
            print(through_proxy('127.0.0.1:{port}'))
            print(through_proxy('example.com:443'))
            try:
                socket.create_connection(('127.0.0.1', {port}), timeout=2)
                print('direct connected')
            except OSError as exc:
                print('direct blocked', exc.errno)
            """)], network_hosts=(f"localhost:{port}",)))
    finally:
        server.close()
        box.remove()
    lines = result.stdout.splitlines()
    assert result.ok, result.stderr
    assert lines[1] == "200 hello from the granted host"
    assert lines[2:4] == ["403", "403"] and lines[4].startswith("direct blocked")
    assert got == [b"hi"]


@needs_sandbox
def test_the_proxy_holds_a_few_connections_and_refuses_the_rest(target: Target) -> None:
    """Idle connections take the proxy's slots; every one beyond them is answered 503 at
    once, so a sandbox cannot make the kernel hold thousands of them."""
    box = Sandbox(default_workspace_root() / f"conn-{target.token}",
                  Constitution(max_wall_seconds=30, max_processes=256, max_connections=4,
                               network_hosts=("localhost:9",)))
    try:
        result = box.run(CommandRequest(argv=["python3", "-c", textwrap.dedent("""
            import socket, time
            idle = [socket.create_connection(('127.0.0.1', 3128), timeout=5)
                    for _ in range(4)]
            time.sleep(0.5)
            answers = []
            for _ in range(6):
                s = socket.create_connection(('127.0.0.1', 3128), timeout=5)
                answers.append((s.recv(200).decode() or 'closed x').split()[1])
            print(' '.join(answers))
            """)], network_hosts=("localhost:9",)))
    finally:
        box.remove()
    assert result.ok, result.stderr
    assert result.stdout.split() == ["503"] * 6


# -- resources and processes ------------------------------------------------------------
@needs_sandbox
def test_a_bounded_fork_storm_hits_the_process_limit(target: Target) -> None:
    result = target.py(f"""
        import os, time
        children = 0
        for _ in range(300):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(30)  # {target.token}
                os._exit(0)
            children += 1
        print('children', children)
        """)
    assert result.ran and "children" in result.stdout
    assert int(result.stdout.split()[-1]) < target.box.policy.max_processes
    assert processes_with(target.token) == []


@needs_sandbox
def test_a_double_forked_daemon_dies_with_the_run(target: Target) -> None:
    result = target.py(f"""
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv('/usr/bin/python3', ['python3', '-c',
                         'import time; time.sleep(60)', '{target.token}'])
            os._exit(0)
        time.sleep(0.5)
        print('parent done')
        """)
    assert result.ok and "parent done" in result.stdout
    deadline = time.monotonic() + 5
    while processes_with(target.token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_with(target.token) == []


KILLED_KERNEL = """
import sys
from pathlib import Path
from resolvers.sandbox import CommandRequest, Constitution, Sandbox
from resolvers.sandbox.layout import build_layout
from resolvers.sandbox.runner import isolation_problem
box = Sandbox(Path(sys.argv[1]), Constitution(max_wall_seconds=30))
isolation_problem()
build_layout(box.policy.binaries, box.policy.python_packages, box.uid is not None)
print("go", flush=True)
box.run(CommandRequest(argv=["python3", "-c", "import time; time.sleep(30)  # " + sys.argv[2]]))
"""


def _kernel_process(code: str, *args: str) -> subprocess.Popen[bytes]:
    """A kernel-like process of its own, for the test to kill -9."""
    package_root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": path})


def _left(token: str, seconds: float = 10) -> list[str]:
    """The processes still carrying ``token`` after ``seconds`` (none: all gone), each said
    with its state, parent and command line, so that a failure names what survived: the
    command, bubblewrap or the guardian."""
    deadline = time.monotonic() + seconds
    while processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = []
    for pid in processes_with(token):
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{pid}/stat").read_text()
            state, parent = stat[stat.rfind(")") + 2:].split()[:2]
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            left.append(f"pid {pid} ({state}, parent {parent}): {command[:160]!r}")
        with contextlib.suppress(OSError):  # leave the machine clean even when the test fails
            os.kill(pid, signal.SIGKILL)
    return left


@needs_sandbox
@pytest.mark.slow
def test_a_kernel_killed_while_bubblewrap_sets_up_leaves_no_process(target: Target) -> None:
    """bubblewrap arms --die-with-parent only after building the mounts: a kernel killed
    in those milliseconds used to orphan the command, which then ran on its own."""
    for step in range(8):
        token = f"{target.token}k{step}"
        kernel = _kernel_process(KILLED_KERNEL, str(target.box.home), token)
        assert kernel.stdout is not None and kernel.stdout.readline().strip() == b"go"
        time.sleep(step * 0.006)  # from the first to the last moment of bubblewrap's setup
        kernel.kill()
        kernel.wait()
        left = _left(token)
        assert not left, f"a kernel killed after {step * 6} ms left {left}"


GUARDED_DAEMON = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", sys.argv[1]])
    os._exit(0)
time.sleep(60)
"""

GUARDED_KERNEL = """
import os, subprocess, sys, time
from resolvers.sandbox.policy import CommandRequest, Constitution
from resolvers.sandbox.runner import _start_guardian
argv = [sys.executable, "-c", sys.argv[1], sys.argv[2]]
read, lifeline = os.pipe()
guardian = _start_guardian(argv, Constitution(), None, CommandRequest(argv=["python3"]), read)
print(guardian.pid, flush=True)
time.sleep(60)
"""


@needs_sandbox
def test_the_guardian_ends_every_process_once_the_kernel_is_gone(target: Target) -> None:
    """Whatever the command left (here a daemon re-parented away from it), the guardian
    ends it when the kernel's lifeline closes, then ends itself."""
    kernel = _kernel_process(GUARDED_KERNEL, GUARDED_DAEMON, target.token)
    assert kernel.stdout is not None
    guardian = int(kernel.stdout.readline())
    deadline = time.monotonic() + 10
    while len(processes_with(target.token)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(processes_with(target.token)) >= 2  # the command and its daemon run
    kernel.kill()
    kernel.wait()
    assert _left(target.token) == []
    deadline = time.monotonic() + 10
    while _running(guardian) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(guardian)


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting for init to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


@needs_sandbox
def test_a_gigabyte_of_output_is_cut_off(target: Target) -> None:
    result = target.py("""
        import sys
        chunk = 'x' * 65536
        for _ in range(16384):
            sys.stdout.write(chunk)
        """)
    assert result.reason == Reason.OUTPUT_LIMIT
    assert len(result.stdout) + len(result.stderr) <= target.box.policy.max_output_bytes
    assert result.seconds < 15


@needs_sandbox
def test_an_endless_loop_is_stopped(target: Target) -> None:
    result = target.py("while True: pass", timeout=2)
    assert result.reason in (Reason.TIMEOUT, Reason.CPU_LIMIT)
    assert result.seconds < 6


@needs_sandbox
def test_a_three_gigabyte_allocation_fails(target: Target) -> None:
    result = target.py("b = bytearray(3 << 30); print('allocated')")
    assert result.reason == Reason.MEMORY_LIMIT and "allocated" not in result.stdout


@needs_sandbox
def test_memory_is_limited_for_the_whole_sandbox(target: Target) -> None:
    """Four processes of 400 MB each, under a policy of 1 GiB: each is within its own
    address-space limit, together they are not, and the sandbox is ended."""
    result = target.py(f"""
        import os, time
        for _ in range(4):
            if os.fork() == 0:
                block = b"x" * (400 << 20)
                time.sleep(20)  # {target.token}
                os._exit(0)
        time.sleep(20)
        """)
    assert result.reason == Reason.MEMORY_LIMIT, result
    assert "the sandbox as a whole" in result.detail
    assert processes_with(target.token) == []


@needs_sandbox
def test_disk_is_limited_for_the_whole_workspace(target: Target) -> None:
    """Twenty files of 60 MiB each (every one under the per-file limit) pass the
    workspace's limit together: the sandbox is ended and says why."""
    result = target.py("""
        import time
        chunk = b"x" * (1 << 20)
        for number in range(20):
            with open(f"/workspace/part{number}", "wb") as out:
                for _ in range(60):
                    out.write(chunk)
                    time.sleep(0.001)
        """)
    assert result.reason == Reason.DISK_LIMIT, result
    assert "bytes in the workspace" in result.detail


@needs_sandbox
def test_many_small_files_hit_the_workspace_s_file_limit(target: Target) -> None:
    result = target.py("""
        import os, time
        for number in range(20000):
            open(f"/workspace/f{number}", "w").close()
        time.sleep(5)
        """)
    assert result.reason == Reason.DISK_LIMIT, result
    assert "files in the workspace" in result.detail


@needs_sandbox
def test_tmp_is_a_size_limited_filesystem(target: Target) -> None:
    result = target.py("""
        import errno
        chunk = b"x" * (1 << 20)
        written = 0
        try:
            for number in range(64):  # files of 32 MiB, each under the per-file limit
                with open(f"/tmp/fill{number}", "wb") as out:
                    for _ in range(32):
                        out.write(chunk)
                        written += 1
        except OSError as exc:
            print("stopped", errno.errorcode[exc.errno], written)
        """)
    assert result.stdout.split()[:2] == ["stopped", "ENOSPC"], result
    assert int(result.stdout.split()[2]) <= target.box.policy.max_tmp_bytes >> 20


# -- the system-call filter, the host's keyrings, the supervisor ------------------------
def _syscall(name: str) -> int:
    from resolvers.sandbox.seccomp_filter import _library

    return int(_library().seccomp_syscall_resolve_name(name.encode()))


@needs_sandbox
@pytest.mark.parametrize("name", ["io_uring_setup", "userfaultfd", "perf_event_open", "bpf",
                                  "keyctl", "add_key", "unshare", "mount", "personality",
                                  "kexec_load"])
def test_system_calls_a_test_has_no_use_for_are_refused(target: Target, name: str) -> None:
    """Each is called with arguments that would succeed (or fail otherwise than EPERM)
    without the filter."""
    arguments = {"io_uring_setup": "8, ctypes.byref(params)", "userfaultfd": "1",  # UFFD_USER_MODE_ONLY
                 "perf_event_open": "ctypes.byref(params), 0, -1, -1, 0", "bpf": "0, None, 0",
                 "keyctl": "0, -3, 0", "add_key": "b'user', b'k', b'v', 1, -3",
                 "unshare": "0x00020000", "mount": "b'none', b'/tmp', b'tmpfs', 0, None",
                 "personality": "0x0040000", "kexec_load": "0, 0, None, 0"}[name]
    result = target.py(f"""
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        params = ctypes.create_string_buffer(256)
        status = libc.syscall({_syscall(name)}, {arguments})
        print(status, ctypes.get_errno())
        """)
    assert result.ok, result.stderr
    assert result.stdout.split() == ["-1", "1"], (name, result.stdout)


@needs_sandbox
def test_the_hosts_session_keyring_is_not_inside(target: Target) -> None:
    """A secret in the kernel's session keyring cannot be read from inside, and a key
    added from inside cannot outlive the sandbox in the kernel's keyring."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    keyctl, add_key = _syscall("keyctl"), _syscall("add_key")
    if libc.syscall(keyctl, 1, f"kernel-test-{target.token}".encode()) < 0:  # JOIN
        pytest.skip(f"keyrings are not available here (errno {ctypes.get_errno()})")
    key = libc.syscall(add_key, b"user", f"planted-{target.token}".encode(), SECRET.encode(),
                       len(SECRET), -3)
    assert key > 0
    result = target.py(f"""
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        buffer = ctypes.create_string_buffer(4096)
        for keyring in (-3, -4, -5):  # session, user, user session
            size = libc.syscall({keyctl}, 11, keyring, buffer, 4096)  # READ
            print("read", keyring, size, ctypes.get_errno(), buffer.raw[:max(size, 0)].hex())
        size = libc.syscall({keyctl}, 11, {key}, buffer, 4096)
        print("key", size, buffer.raw[:max(size, 0)])
        print("added", libc.syscall({add_key}, b"user", b"left-behind-{target.token}",
                                    b"x", 1, -3), ctypes.get_errno())
        try:
            print(open("/proc/keys").read())
        except OSError as exc:
            print("no /proc/keys", exc.errno)
        """)
    assert result.ok, result.stderr
    assert SECRET not in result.stdout and f"planted-{target.token}" not in result.stdout, \
        result.stdout
    assert "added -1 1" in result.stdout
    listing = ctypes.create_string_buffer(4096)
    size = libc.syscall(keyctl, 11, -3, listing, 4096)
    assert size == 4  # only the key the test planted: nothing was added from inside


@needs_sandbox
@pytest.mark.parametrize("how", ["kill", "pidfd", "tgkill"])
def test_the_tested_code_cannot_signal_the_supervisor(target: Target, how: str) -> None:
    """SIGINT (or SIGTERM) to pid 1, the supervisor, used to stop it before it reported:
    now the run ends with its real verdict."""
    ws = target.box.workspace
    call = {"kill": "os.kill(1, signal.SIGINT); os.kill(1, signal.SIGTERM)",
            "pidfd": "signal.pidfd_send_signal(os.pidfd_open(1), signal.SIGINT)",
            "tgkill": f"libc.syscall({_syscall('tgkill')}, 1, 1, signal.SIGINT)"}[how]
    (ws / "main.py").write_text(textwrap.dedent(f"""
        import ctypes, os, signal, time
        libc = ctypes.CDLL(None)
        try:
            {call}
        except OSError:
            pass
        time.sleep(0.3)

        def value():
            return 1
        """))
    (ws / "test_main.py").write_text(FAILING_TEST)
    result = target.box.run_tests(["test_main.py"])
    assert result.report == {"tests": {"test_main.py::test_value": "failed"},
                             "counts": {"passed": 0, "failed": 1, "error": 0, "skipped": 0}}, \
        result


# -- memory and disk that are no process's resident memory ------------------------------
SMALL = Constitution(max_wall_seconds=30, max_cpu_seconds=20, max_processes=16,
                     max_memory_bytes=128 << 20, max_tmp_bytes=16 << 20, max_shm_bytes=16 << 20,
                     max_file_bytes=16 << 20, max_workspace_bytes=48 << 20, max_open_files=64)
MIB = 1 << 20


@pytest.fixture
def small(target: Target) -> Iterator[Sandbox]:
    """A sandbox with small limits, so that each attack meets them in a moment."""
    box = Sandbox(default_workspace_root() / f"small-{target.token}", SMALL)
    yield box
    box.remove()


def _held(result: RunResult, word: str = "held") -> int:
    """The most the attack reported holding (lines ``held N``, flushed as it goes)."""
    counts = [int(line.split()[1]) for line in result.stdout.splitlines()
              if line.startswith(word + " ") and line.split()[1].isdigit()]
    return max(counts, default=0)


def _py(box: Sandbox, code: str) -> RunResult:
    return box.run(CommandRequest(argv=["python3", "-c", textwrap.dedent(code)]))


@needs_sandbox
@pytest.mark.parametrize("place", ["/dev/shm", "/dev", "/tmp", "site-packages"])
def test_files_in_memory_filesystems_stay_within_the_memory_limit(small: Sandbox,
                                                                  place: str) -> None:
    """/dev/shm, /dev, the masked site-packages and /tmp are tmpfs (memory): each is sized
    or read-only, and what they hold counts against the sandbox's memory limit."""
    from resolvers.sandbox.layout import python_version_dir

    folder = f"/usr/lib/{python_version_dir()}/site-packages" if place == "site-packages" \
        else place
    result = _py(small, f"""
        import errno, os
        chunk, held = b"x" * (1 << 20), 0
        try:
            for number in range(1000):
                with open(f"{folder}/fill{{number}}", "wb") as out:
                    for _ in range(4):
                        out.write(chunk)
                        out.flush()
                        held += len(chunk)
                print("held", held, flush=True)
        except OSError as exc:
            print("stopped", errno.errorcode[exc.errno], flush=True)
        """)
    assert result.reason == Reason.MEMORY_LIMIT or "stopped" in result.stdout, result
    assert _held(result) <= SMALL.max_memory_bytes * 1.1
    if place in ("/dev", "site-packages"):  # read-only (or, with no mask, not there)
        assert re.search("stopped (EROFS|ENOENT)", result.stdout) and _held(result) == 0, result


@needs_sandbox
def test_dev_shm_files_and_resident_memory_add_up_to_one_limit(small: Sandbox) -> None:
    """16 MiB in /dev/shm and /tmp each, then resident memory up to the limit: the
    sandbox is ended when their sum passes it, though none does alone."""
    result = _py(small, """
        import time
        for place in ("/dev/shm", "/tmp"):
            with open(f"{place}/fill", "wb") as out:
                out.write(b"x" * (15 << 20))
        blocks = []
        for _ in range(100):
            blocks.append(b"y" * (1 << 20))
            print("held", (30 << 20) + len(blocks) * (1 << 20), flush=True)
            time.sleep(0.01)
        time.sleep(5)
        """)
    assert result.reason == Reason.MEMORY_LIMIT, result
    assert _held(result) <= SMALL.max_memory_bytes * 1.1


SYSTEM_CALL_STORES = {
    "memfd": """
        import os
        fd = os.memfd_create("hidden")
        os.posix_fallocate(fd, 0, 1 << 30)
        print("held", 1 << 30)
        """,
    "memfd_secret": """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.syscall(447, 0)
        print("held", 1 << 30 if fd >= 0 else 0, ctypes.get_errno())
        if fd < 0:
            raise OSError(ctypes.get_errno(), "memfd_secret")
        """,
    "sysv_shm": """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        segment = libc.shmget(0, 1 << 30, 0o1600)
        if segment < 0:
            raise OSError(ctypes.get_errno(), "shmget")
        address = libc.shmat(segment, None, 0)
        ctypes.memset(address, 1, 1 << 30)
        libc.shmdt(ctypes.c_void_p(address))
        print("held", 1 << 30)
        """,
    "sysv_queue": """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        queue = libc.msgget(0, 0o1600)
        if queue < 0:
            raise OSError(ctypes.get_errno(), "msgget")
        print("held", 1)
        """,
    "posix_queue": """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        queue = libc.mq_open(b"/hidden", 0o100 | 0o2, 0o600, None)
        if queue < 0:
            raise OSError(ctypes.get_errno(), "mq_open")
        print("held", 1)
        """,
    "pipe_grown": """
        import fcntl, os
        read, write = os.pipe()
        fcntl.fcntl(write, 1031, 1 << 20)  # F_SETPIPE_SZ
        print("held", 1 << 20)
        """,
    "socket_buffer_raised": """
        import socket
        a, b = socket.socketpair()
        a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
        print("held", 8 << 20)
        """,
}


@needs_sandbox
@pytest.mark.parametrize("attack", sorted(SYSTEM_CALL_STORES))
def test_memory_no_process_owns_cannot_be_made(small: Sandbox, attack: str) -> None:
    """memfds, System V shared memory and queues, POSIX queues, grown pipes and raised
    socket buffers hold memory outside every process: the filter refuses them."""
    result = _py(small, SYSTEM_CALL_STORES[attack])
    assert result.exit_code != 0 and _held(result) == 0, result
    assert "PermissionError" in result.stderr or "Operation not permitted" in result.stderr \
        or "[Errno 1]" in result.stderr, result.stderr


@needs_sandbox
@pytest.mark.parametrize("processes", [1, 6])
def test_socket_buffers_count_against_the_memory_limit(small: Sandbox, processes: int) -> None:
    """Socket pairs filled until full, in one process or several: descriptors are capped
    per process and every socket is charged its buffers, so the run ends out of
    descriptors or at the memory limit, never holding more than the limit."""
    result = _py(small, f"""
        import os, socket, time
        for _ in range({processes} - 1):
            if os.fork() == 0:
                break
        pairs, held = [], 0
        try:
            while True:
                a, b = socket.socketpair()
                pairs.append((a, b))
                for end in (a, b):
                    end.setblocking(False)
                    try:
                        while True:
                            held += end.send(b"x" * 65536)
                    except BlockingIOError:
                        pass
                print("held", held * {processes}, flush=True)
        except OSError as exc:
            print("stopped", exc.errno, flush=True)
        time.sleep(3)
        """)
    assert result.reason == Reason.MEMORY_LIMIT or "stopped 24" in result.stdout, result
    assert _held(result) <= SMALL.max_memory_bytes * 1.1


@needs_sandbox
@pytest.mark.parametrize("trick", ["unlinked", "unlinked_mapped", "deep", "closed_folder"])
def test_disk_the_walk_used_to_miss_counts(small: Sandbox, trick: str) -> None:
    """Files written after being unlinked (held open, or mapped and closed), 480 MiB
    below folders nested past PATH_MAX, and a folder closed with chmod 0300: each counts
    against the workspace's limit and the run ends with DISK_LIMIT."""
    result = _py(small, f"""
        import mmap, os, time
        trick = {trick!r}
        if trick == "deep":
            for _ in range(24):
                os.mkdir("d" * 200)
                os.chdir("d" * 200)
        elif trick == "closed_folder":
            os.mkdir("closed")
            os.chdir("closed")
        kept, held = [], 0
        for number in range(20):
            fd = os.open(f"part{{number}}", os.O_RDWR | os.O_CREAT, 0o600)
            if trick.startswith("unlinked"):
                os.unlink(f"part{{number}}")
            for _ in range(8):
                os.write(fd, b"x" * (1 << 20))
                held += 1 << 20
                print("held", held, flush=True)
                time.sleep(0.01)
            if trick == "unlinked_mapped":
                kept.append(mmap.mmap(fd, 4096))
                os.close(fd)
            else:
                kept.append(fd)
            if trick == "closed_folder" and number == 0:
                os.chmod("/workspace/closed", 0o300)
        time.sleep(5)
        """)
    assert result.reason == Reason.DISK_LIMIT, result
    assert _held(result) <= SMALL.max_workspace_bytes * 1.1 + 16 * MIB  # + one interval


@needs_sandbox
def test_set_uid_files_and_an_opened_workspace_reach_no_one(target: Target) -> None:
    """The command makes a set-uid copy of a program and opens its workspace to all:
    the workspace's private home keeps every other user out while it runs, the
    guardian strips the bit, and after the run nothing set-uid is left."""
    ws = target.box.workspace
    done = threading.Event()
    outcome: list[RunResult] = []

    def run() -> None:
        outcome.append(target.py("""
            import os, shutil, time
            shutil.copy("/usr/bin/python3", "/workspace/suid-python")
            os.chmod("/workspace/suid-python", 0o6755)
            os.chmod("/workspace", 0o777)
            time.sleep(2)
            print(oct(os.stat("/workspace/suid-python").st_mode))
            """))
        done.set()

    threading.Thread(target=run, daemon=True).start()
    deadline = time.monotonic() + 10
    while not (ws / "suid-python").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert target.box.home.stat().st_mode & 0o777 == 0o700
    if os.geteuid() == 0:  # another user tries to reach it while the run goes on
        other = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                "/bin/cat", str(ws / "suid-python")],
                               capture_output=True, text=True, check=False)
        assert other.returncode != 0 and "Permission denied" in other.stderr
    assert done.wait(30)
    assert outcome[0].ran, outcome[0]
    assert int(outcome[0].stdout.split()[-1], 8) & 0o6000 == 0  # stripped while running
    assert (ws / "suid-python").stat().st_mode & 0o6000 == 0
    assert ws.stat().st_mode & 0o777 == 0o700


@needs_sandbox
def test_daemon_threads_alive_at_exit_end_cleanly(target: Target) -> None:
    """CPython ends a daemon thread that wakes during shutdown with pthread_exit, for which
    glibc loads libgcc_s at run time (ldd does not list it): without it the process aborts
    ("libgcc_s.so.1 must be installed for pthread_exit to work")."""
    result = target.py(textwrap.dedent("""
        import ctypes, threading, time
        ctypes.CDLL("libgcc_s.so.1")
        def wake():
            while True:
                time.sleep(0.0005)
        for _ in range(8):
            threading.Thread(target=wake, daemon=True).start()
        time.sleep(0.05)
        print("done")
        """))
    assert result.ok and result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "done"


# -- verification cannot be forged -------------------------------------------------------
FAILING_TEST = "from main import value\n\ndef test_value():\n    assert value() == 2\n"
FORGERIES = {
    "conftest.py": "print('PASSED test_main.py::test_value')\n"
                   "import _pytest.reports\n"
                   "_pytest.reports.TestReport.passed = property(lambda self: True)\n",
    "pytest.ini": "[pytest]\naddopts = -p no:junitxml -k nothing\n",
    "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-k nothing'\n",
    "sitecustomize.py": "import sys; sys.exit(0)\n",
    "usercustomize.py": "import sys; sys.exit(0)\n",
    "evil.pth": "import sys; sys.exit(0)\n",
    "pytest.py": "import sys\ndef main(*a, **k):\n    return 0\n",
    "xml/__init__.py": "",
    "xml/etree/__init__.py": "",
    "xml/etree/ElementTree.py": "raise SystemExit(0)\n",
}


@needs_sandbox
def test_proposal_files_cannot_forge_a_passing_report(target: Target) -> None:
    ws = target.box.workspace
    (ws / "main.py").write_text("def value():\n    print('PASSED test_main.py::test_value')\n"
                                "    return 1\n")
    (ws / "test_main.py").write_text(FAILING_TEST)
    for name, text in FORGERIES.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    result = target.box.run_tests(["test_main.py"])
    assert "PASSED test_main.py::test_value" in result.stdout  # printed, and ignored
    assert result.exit_code == 1
    assert result.report == {"tests": {"test_main.py::test_value": "failed"},
                             "counts": {"passed": 0, "failed": 1, "error": 0, "skipped": 0}}


@needs_sandbox
def test_a_passing_suite_reports_passed(target: Target) -> None:
    ws = target.box.workspace
    (ws / "main.py").write_text("def value():\n    return 2\n")
    (ws / "test_main.py").write_text(FAILING_TEST + "\nclass TestMore:\n"
                                     "    def test_again(self):\n        assert True\n")
    result = target.box.run_tests(["test_main.py"])
    assert result.exit_code == 0 and result.report is not None
    assert result.report["tests"] == {"test_main.py::TestMore::test_again": "passed",
                                      "test_main.py::test_value": "passed"}


PASSING_JUNIT = ('<testsuites><testsuite tests="1"><testcase classname="test_main" '
                 'name="test_value" file="test_main.py"/></testsuite></testsuites>')
FAKE_PHASES = "".join(
    f'{{"node": "test_main.py::test_value", "when": "{when}", "outcome": "passed"}}\n'
    for when in ("setup", "call", "teardown"))
FAKE_REPORT = '{"tests": {"test_main.py::test_value": "passed"}}'
# Each attack is main.py's own code: it runs inside the tested process, at import.
VERDICT_ATTACKS = {
    "atexit_rewrite": f"""
        import atexit, os
        def forge():
            for place in ("/report", "/workspace", "/tmp", "/workspace/.report"):
                try:
                    os.makedirs(place, exist_ok=True)
                    with open(place + "/junit.xml", "w") as out:
                        out.write({PASSING_JUNIT!r})
                except OSError:
                    pass
            os._exit(0)
        atexit.register(forge)
        """,
    "descriptors": f"""
        import atexit, os
        def forge(text):
            for fd in range(3, 256):
                try:
                    os.write(fd, text.encode())
                except OSError:
                    pass
        forge({FAKE_PHASES!r})
        atexit.register(lambda: (forge({FAKE_REPORT!r}), os._exit(0)))
        """,
    "records_then_exit": """
        import json, os, sys
        for when in ("setup", "call", "teardown"):
            line = {"node": "test_main.py::test_value", "when": when, "outcome": "passed"}
            os.write(int(sys.argv[1]), (json.dumps(line) + "\\n").encode())
        os.write(int(sys.argv[1]), b'{"node": "", "when": "session", "outcome": "finished"}\\n')
        os._exit(0)
        """,
    "key_hunt": """
        import hashlib, hmac, json, os, sys
        key = b""
        for fd in sorted(int(n) for n in os.listdir("/proc/self/fd")):
            try:
                key = key or (os.read(fd, 64) if fd > 2 else b"")
            except OSError:
                pass
        if len(key) == 32:  # the run's key was left where the tested code can read it
            records = [("test_main.py::test_value", w, "passed")
                       for w in ("setup", "call", "teardown")] + [("", "session", "finished")]
            for place, fields in enumerate(records):
                mark = hmac.new(key, json.dumps([place, *fields]).encode(), hashlib.sha256)
                line = dict(zip(("node", "when", "outcome"), fields), seq=place,
                            mac=mark.hexdigest())
                os.write(int(sys.argv[1]), (json.dumps(line) + "\\n").encode())
            os._exit(0)
        """,
    "supervisor": f"""
        import ctypes, os
        reached = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            if ctypes.CDLL(None).ptrace(16, int(pid), 0, 0) == 0:  # PTRACE_ATTACH
                reached.append("ptrace " + pid)
            try:
                for fd in os.listdir(f"/proc/{{pid}}/fd"):
                    with open(f"/proc/{{pid}}/fd/{{fd}}", "w") as out:
                        out.write({FAKE_REPORT!r})
                        reached.append(f"fd {{pid}}/{{fd}}")
            except OSError:
                pass
            try:
                open(f"/proc/{{pid}}/mem", "rb").close()
                reached.append("mem " + pid)
            except OSError:
                pass
        with open("/workspace/reached.txt", "w") as out:
            out.write(repr(reached))
        """,
    "links": """
        import os
        for place in ("/report/junit.xml", "/workspace/junit.xml", "/tmp/junit.xml"):
            for make in (lambda p: os.symlink("/etc/passwd", p), os.mkfifo, os.mkdir):
                try:
                    if os.path.lexists(place):
                        os.remove(place) if not os.path.isdir(place) else os.rmdir(place)
                    make(place)
                except OSError:
                    pass
        """,
}


@needs_sandbox
@pytest.mark.parametrize("attack", sorted(VERDICT_ATTACKS))
def test_the_tested_code_cannot_forge_or_redirect_the_verdict(target: Target,
                                                              attack: str) -> None:
    """An atexit hook rewriting any report it can reach then ``os._exit(0)``; fake phase
    records written to every descriptor; the supervisor attacked through ptrace and
    /proc; the report's names made links, FIFOs or directories: the failing test stays
    failed (or the report is refused as tampered), never passed."""
    ws = target.box.workspace
    (ws / "main.py").write_text(textwrap.dedent(VERDICT_ATTACKS[attack])
                                + "\ndef value():\n    return 1\n")
    (ws / "test_main.py").write_text(FAILING_TEST)
    result = target.box.run_tests(["test_main.py"])
    assert result.report is not None
    if attack in ("descriptors", "records_then_exit"):  # unmarked records: refused
        assert "verdict stream was forged" in result.report.get("error", ""), result
    else:
        assert result.report["tests"] == {"test_main.py::test_value": "failed"}, result
    if attack == "supervisor":
        assert (ws / "reached.txt").read_text() == "[]"
    if attack == "atexit_rewrite":
        assert result.exit_code == 0  # os._exit(0) chose the status; the report stands
    assert SECRET not in str(result.report)


@needs_sandbox
def test_a_daemon_the_tested_code_leaves_does_not_hold_the_verdict(target: Target) -> None:
    """A process the tested code forks away keeps the runner's verdict pipe open; the
    supervisor stops reading when the runner ends, and the run ends with it."""
    ws = target.box.workspace
    (ws / "main.py").write_text(textwrap.dedent(f"""
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(60)  # {target.token}
            os._exit(0)

        def value():
            return 1
        """))
    (ws / "test_main.py").write_text(FAILING_TEST)
    result = target.box.run_tests(["test_main.py"])
    assert result.reason is None and result.seconds < 15, result
    assert result.report == {"tests": {"test_main.py::test_value": "failed"},
                             "counts": {"passed": 0, "failed": 1, "error": 0, "skipped": 0}}
    assert processes_with(target.token) == []


# -- refusals ---------------------------------------------------------------------------
def test_a_shell_string_is_refused(target: Target) -> None:
    with pytest.raises(ValueError, match="argv list"):
        CommandRequest(argv="rm -rf /")  # type: ignore[arg-type]
    assert target.box.run(CommandRequest(argv=["rm -rf / ; echo"])).reason == Reason.NOT_AN_ARGV


def test_a_working_directory_outside_is_refused(target: Target) -> None:
    result = target.box.run(CommandRequest(argv=["ls"], cwd=".."))
    assert result.reason == Reason.CWD_OUTSIDE_WORKSPACE


def test_limits_above_the_policy_are_refused(target: Target) -> None:
    assert target.box.run(CommandRequest(argv=["true"], timeout=3600)).reason \
        == Reason.LIMIT_ABOVE_POLICY


def test_without_bubblewrap_commands_are_refused(target: Target,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from resolvers.sandbox import runner

    monkeypatch.setattr(runner, "isolation_problem",
                        lambda: "bubblewrap (bwrap) is not installed, so commands are refused")
    result = target.box.run(CommandRequest(argv=["true"]))
    assert (result.ran, result.reason) == (False, Reason.ISOLATION_UNAVAILABLE)
    assert "bubblewrap" in result.detail


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's sandboxes run as another uid")
def test_a_workspace_the_sandbox_uid_cannot_reach_is_refused(tmp_path: Path) -> None:
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    with pytest.raises(SandboxError, match="not reachable"):
        Sandbox(closed / "ws")


def test_tool_code_is_still_linted_before_registration() -> None:
    clean = "import json\n\ndef run(text):\n    return json.dumps(sorted(text.split()))\n"
    assert check_tool_code(clean) == []
    bad = ("import os\nfrom subprocess import run\nimport urllib.request\n"
           "eval('1')\nopen('x', 'w')\nopen('y')\n().__class__.__bases__\n")
    codes = [(v.line, v.code) for v in check_tool_code(bad)]
    assert codes == [(1, "FORBIDDEN_IMPORT"), (2, "FORBIDDEN_IMPORT"), (3, "FORBIDDEN_IMPORT"),
                     (4, "FORBIDDEN_CALL"), (5, "FILE_WRITE"), (7, "DUNDER_ACCESS"),
                     (7, "DUNDER_ACCESS")]
    assert check_tool_code("def f(:\n")[0].code == "SYNTAX_ERROR"


# -- the same attacks as an ordinary user -------------------------------------------------
ORDINARY_UID = 65534
SYSTEM_PYTHON = "/usr/bin/python3"


@needs_sandbox
@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="already running as an ordinary user")
@pytest.mark.skipif(not Path(SYSTEM_PYTHON).exists(), reason=f"no {SYSTEM_PYTHON} to run as "
                    "an ordinary user")
def test_every_attack_is_contained_for_an_ordinary_user(tmp_path: Path) -> None:
    """Run this file again as uid 65534 from the system's python3, with a copy of the
    sandbox package and the few distributions it needs, readable by that user."""
    from tests.resolvers.ordinary_user import prepare_copy

    here = Path(__file__).resolve().parents[2]
    copy = prepare_copy(here, Path(f"/tmp/kernel-ordinary-user-{uuid.uuid4().hex[:8]}"))
    try:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(copy), "LANG": "C.UTF-8",
               "PYTHONPATH": f"{copy / 'src'}:{copy / 'site'}", "PYTHONDONTWRITEBYTECODE": "1"}
        if os.environ.get("KERNEL_REQUIRE_SANDBOX"):
            env["KERNEL_REQUIRE_SANDBOX"] = "1"
        command = ["setpriv", f"--reuid={ORDINARY_UID}", f"--regid={ORDINARY_UID}",
                   "--clear-groups", SYSTEM_PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "--noconftest", "-x", "-k", "not ordinary_user", "--rootdir", str(copy / "src"),
                   str(copy / "src/tests/resolvers/test_sandbox_attacks.py")]
        result = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True,
                                timeout=600, check=False)
        assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
        passed = re.search(r"(\d+) passed", result.stdout)
        assert passed and int(passed.group(1)) >= 25, result.stdout[-1000:]
    finally:
        shutil.rmtree(copy, ignore_errors=True)
        with contextlib.suppress(OSError):
            shutil.rmtree(Path(f"/tmp/kernel-workspaces-{ORDINARY_UID}"), ignore_errors=True)
