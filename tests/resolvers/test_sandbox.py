"""The sandbox contains each classic escape, with its reason code."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from resolvers.sandbox import CommandRequest, Constitution, Reason, Sandbox
from resolvers.sandbox.runner import SandboxError, _wrapper, default_workspace_root
from resolvers.sandbox.static_check import check_tool_code

needs_isolation = pytest.mark.skipif(
    _wrapper(True)[0] is None,
    reason="network namespaces (unshare) unavailable here: the sandbox refuses to run "
           "commands, which test_refuses_without_isolation covers")


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    workspace = default_workspace_root() / f"test-{uuid.uuid4().hex[:12]}"
    box = Sandbox(workspace, Constitution(max_wall_seconds=5, max_cpu_seconds=4,
                                          max_output_bytes=1 << 20, max_processes=32))
    yield box
    shutil.rmtree(workspace, ignore_errors=True)


@pytest.fixture
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    victim = tmp_path_factory.mktemp("outside")
    (victim / "secret.txt").write_text("operator secret")
    return victim


def cmd(*argv: str, **kw: object) -> CommandRequest:
    return CommandRequest(argv=list(argv), **kw)


def test_a_binary_not_on_the_list_never_runs(sandbox: Sandbox) -> None:
    for argv in (["curl", "http://example.com"], ["nc", "-l", "9"], ["/bin/ls"]):
        result = sandbox.run(cmd(*argv))
        assert (result.ran, result.reason) == (False, Reason.BINARY_NOT_ALLOWED)


def test_a_shell_string_is_refused(sandbox: Sandbox) -> None:
    with pytest.raises(ValueError, match="argv list"):
        CommandRequest(argv="rm -rf /")  # type: ignore[arg-type]
    assert sandbox.run(cmd("rm -rf / ; echo")).reason == Reason.NOT_AN_ARGV
    assert sandbox.run(cmd("sh", "-c", "echo hi")).reason == Reason.NOT_AN_ARGV


def test_rm_rf_outside_the_workspace_is_refused(sandbox: Sandbox, outside: Path) -> None:
    for target in (str(outside), "/", "../..", "~", f"--dir={outside}"):
        result = sandbox.run(cmd("rm", "-rf", target))
        assert (result.ran, result.reason) == (False, Reason.PATH_OUTSIDE_WORKSPACE), target
    assert (outside / "secret.txt").exists()
    assert sandbox.run(cmd("ls", cwd="..")).reason == Reason.CWD_OUTSIDE_WORKSPACE


def test_a_symlink_escape_is_refused(sandbox: Sandbox, outside: Path) -> None:
    (sandbox.workspace / "innocent").symlink_to(outside)
    for argv in (["cat", "innocent/secret.txt"], ["rm", "-rf", "innocent/"]):
        result = sandbox.run(cmd(*argv))
        assert (result.ran, result.reason) == (False, Reason.PATH_OUTSIDE_WORKSPACE)
    assert (outside / "secret.txt").read_text() == "operator secret"


@needs_isolation
def test_an_allowed_command_runs(sandbox: Sandbox) -> None:
    (sandbox.workspace / "data.txt").write_text("b\na\n")
    result = sandbox.run(cmd("sort", "data.txt"))
    assert result.ok and result.stdout == "a\nb\n"
    result = sandbox.run(cmd("python3", "-c", "print(6 * 7)"))
    assert result.ok and result.stdout.strip() == "42"
    assert "network=isolated" in result.containment


@needs_isolation
def test_the_api_key_never_reaches_the_command(sandbox: Sandbox,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-not-for-tools")
    result = sandbox.run(cmd(
        "python3", "-c", "import os; print(os.environ.get('ANTHROPIC_API_KEY'), "
                         "sorted(os.environ))",
        env={"ANTHROPIC_API_KEY": "sk-ant-api03-not-for-tools", "LANG": "C.UTF-8"}))
    assert result.ok
    assert "sk-ant" not in result.stdout and result.stdout.startswith("None")
    assert result.dropped_env == ["ANTHROPIC_API_KEY"]


def _accept_until_closed(server: socket.socket) -> None:
    with contextlib.suppress(OSError):  # closing the server ends the wait
        server.accept()


@needs_isolation
def test_a_network_connection_fails(sandbox: Sandbox) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    threading.Thread(target=_accept_until_closed, args=(server,), daemon=True).start()
    try:
        result = sandbox.run(cmd("python3", "-c",
                                 f"import socket; socket.create_connection(('127.0.0.1', {port}),"
                                 " timeout=2); print('connected')"))
    finally:
        server.close()
    assert result.ran and result.exit_code != 0 and "connected" not in result.stdout
    assert "network=isolated" in result.containment
    assert sandbox.run(cmd("python3", "-c", "1", network_host="example.com")).reason \
        == Reason.NETWORK_NOT_GRANTED


@needs_isolation
def test_a_fork_bomb_is_contained(sandbox: Sandbox) -> None:
    result = sandbox.run(cmd("python3", "-c", "import os\nwhile True:\n    os.fork()"))
    assert result.ran and result.reason in (Reason.PROCESS_LIMIT, Reason.TIMEOUT)
    assert result.seconds < 10
    leftover = subprocess.run(["pgrep", "-u", "nobody", "-f", "os.fork"], capture_output=True,
                              text=True, check=False).stdout.split()
    assert leftover == []


@needs_isolation
def test_a_gigabyte_of_output_is_cut_off(sandbox: Sandbox) -> None:
    result = sandbox.run(cmd("python3", "-c",
                             "import sys\nchunk = 'x' * 65536\n"
                             "for _ in range(16384):\n    sys.stdout.write(chunk)"))
    assert result.reason == Reason.OUTPUT_LIMIT
    assert len(result.stdout) <= sandbox.policy.max_output_bytes
    assert result.seconds < 10


@needs_isolation
def test_an_infinite_loop_is_stopped(sandbox: Sandbox) -> None:
    result = sandbox.run(cmd("python3", "-c", "while True: pass", timeout=2))
    assert result.reason in (Reason.TIMEOUT, Reason.CPU_LIMIT)
    assert result.seconds < 6


def test_limits_above_the_policy_are_refused(sandbox: Sandbox) -> None:
    assert sandbox.run(cmd("true", timeout=3600)).reason == Reason.LIMIT_ABOVE_POLICY


def test_refuses_without_isolation(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    from resolvers.sandbox import runner

    monkeypatch.setattr(runner, "_wrapper", lambda isolate: (None, []))
    result = sandbox.run(cmd("true"))
    assert (result.ran, result.reason) == (False, Reason.ISOLATION_UNAVAILABLE)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root drops to the unprivileged user")
def test_a_workspace_the_unprivileged_user_cannot_reach_is_refused(tmp_path: Path) -> None:
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    with pytest.raises(SandboxError, match="not reachable"):
        Sandbox(closed / "ws")


def test_tool_code_is_checked_before_registration() -> None:
    clean = "import json\n\ndef run(text):\n    return json.dumps(sorted(text.split()))\n"
    assert check_tool_code(clean) == []
    bad = ("import os\nfrom subprocess import run\nimport urllib.request\n"
           "eval('1')\nopen('x', 'w')\nopen('y')\n().__class__.__bases__\n")
    codes = [(v.line, v.code) for v in check_tool_code(bad)]
    assert codes == [(1, "FORBIDDEN_IMPORT"), (2, "FORBIDDEN_IMPORT"), (3, "FORBIDDEN_IMPORT"),
                     (4, "FORBIDDEN_CALL"), (5, "FILE_WRITE"), (7, "DUNDER_ACCESS"),
                     (7, "DUNDER_ACCESS")]
    assert check_tool_code("def f(:\n")[0].code == "SYNTAX_ERROR"
