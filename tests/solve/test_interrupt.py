"""Interrupting ``kernel solve`` during a sandboxed test leaves no process of the run."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from resolvers.sandbox.runner import default_workspace_root, remove_leftovers
from tests.sandbox_support import needs_sandbox, processes_with
from tests.solve import scripts

_names = itertools.count()


def _ended_or_said_where(kernel: subprocess.Popen[bytes], timeout: float) -> bytes:
    """Wait for the kernel to end, reading what it writes meanwhile (a pipe nobody reads
    would stop it once full), and return its stderr; if it does not end, fail with every
    thread's stack (the faulthandler dumps them on SIGABRT), so a hang says where it
    hangs."""
    try:
        return kernel.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        kernel.send_signal(signal.SIGABRT)
        _, err = kernel.communicate(timeout=30)
        pytest.fail(f"the kernel had not ended {timeout:.0f} s after the signal; its "
                    f"threads:\n{err.decode(errors='replace')[-8000:]}")


def _sigint_ignored_and_blocked() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _signal_masks(pid: int) -> list[str]:
    """The kernel's blocked and ignored signals, as /proc shows them (said when it did
    not stop as asked)."""
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    return [line for line in status if line.startswith(("SigBlk", "SigIgn"))]


@needs_sandbox
@pytest.mark.slow
@pytest.mark.parametrize(("signum", "inherited"), [
    (signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGKILL, False),
    (signal.SIGINT, True)], ids=["SIGINT", "SIGTERM", "SIGKILL", "SIGINT-ignored-by-parent"])
def test_interrupting_solve_ends_every_process_of_the_run(data_dir: Path, tmp_path: Path,
                                                          signum: int, inherited: bool) -> None:
    """``inherited``: the kernel is started with SIGINT ignored and blocked, as a parent
    may leave it (a shell's background job; a thread that blocks signals); Ctrl-C still
    stops it."""
    token = f"test_slow_{uuid.uuid4().hex[:12]}"
    script = tmp_path / "slow.script.yaml"
    scripts.slow_test(script, f"{token}.py", 50, classify=False)
    env = {**os.environ, "KERNEL_DATA_DIR": str(data_dir),
           "KERNEL_GRAPH_NAME": f"interrupt-{next(_names)}", "COLUMNS": "120"}
    kernel = subprocess.Popen(
        [sys.executable, "-X", "faulthandler", "-c", "from kernel.cli.app import main; main()",
         "solve", "Wait for a slow test", "--proposer", "scripted", "--script", str(script),
         "--budget", "1"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=_sigint_ignored_and_blocked if inherited else None)
    try:
        deadline = time.monotonic() + 120
        while not processes_with(token) and time.monotonic() < deadline:
            assert kernel.poll() is None, kernel.communicate()
            time.sleep(0.2)
        assert processes_with(token), "the sandboxed test never started"
        masks = _signal_masks(kernel.pid)
        kernel.send_signal(signum)
        err = _ended_or_said_where(kernel, timeout=60)  # a loaded machine's cleanup is slow
        if signum != signal.SIGKILL:  # a clean stop: resumable, with the command to resume
            assert kernel.returncode == 3, (masks, err)
            assert b"continue with: kernel resume run:" in err and b"Traceback" not in err
    finally:
        if kernel.poll() is None:
            kernel.kill()
            kernel.wait()
    deadline = time.monotonic() + 20  # a shared, loaded machine can take a while to reap
    while processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_with(token) == []
    root = default_workspace_root()
    left = [p for p in root.iterdir() if (p / "workspace" / f"{token}.py").exists()]
    if signum != signal.SIGKILL:
        assert left == []  # an interrupted kernel removes the workspace it was using
    else:  # nothing runs after SIGKILL: `kernel resume` clears what the run left
        assert len(left) == 1
        run_prefix = left[0].name.split("-")[0]
        assert remove_leftovers(root, run_prefix) >= 1 and not left[0].exists()
