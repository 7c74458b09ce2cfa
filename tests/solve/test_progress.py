"""What a person sees while a run works: a live view on a terminal that keeps moving during
a long sandbox step, and progress lines on stderr when the output is piped."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.sandbox_support import needs_sandbox
from tests.solve import scripts

SLEEP_SECONDS = 5


def _env(data_dir: Path, name: str) -> dict[str, str]:
    return {**os.environ, "KERNEL_DATA_DIR": str(data_dir), "KERNEL_GRAPH_NAME": name,
            "COLUMNS": "110", "LINES": "40", "TERM": "xterm-256color"}


KERNEL = [sys.executable, "-c", "from kernel.cli.app import main; main()"]


@needs_sandbox
@pytest.mark.slow
def test_the_live_view_moves_while_the_sandbox_works(data_dir: Path, tmp_path: Path) -> None:
    script = scripts.slow_test(tmp_path / "slow.yaml", "test_wait.py", SLEEP_SECONDS)
    primary, secondary = pty.openpty()
    kernel = subprocess.Popen(
        [*KERNEL, "solve", "Wait for a slow test", "--proposer", "scripted", "--script",
         str(script), "--budget", "1"],
        env=_env(data_dir, "progress-live"), stdin=secondary, stdout=secondary,
        stderr=secondary, close_fds=True)
    os.close(secondary)
    screen, frames = b"", []  # what the terminal received, and when
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([primary], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            screen += chunk
            frames.append((time.monotonic(), chunk.decode(errors="replace")))
        elif kernel.poll() is not None:
            break
    kernel.wait(timeout=30)
    os.close(primary)
    text = screen.decode(errors="replace")
    assert kernel.returncode == 0, text[-2000:]
    # The status line names the step, the attempt and the call, and its clock runs while
    # the tests sleep in the sandbox, redrawn with no new event from the kernel.
    clocks = {float(x) for x in re.findall(r"running the tests in the sandbox (\d+\.\d)s", text)}
    assert "verify" in text and "attempt 1" in text
    assert len(clocks) >= 5 and max(clocks) >= SLEEP_SECONDS - 1.5, sorted(clocks)
    spinner = {c for c in text if "\u2800" <= c <= "\u28ff"}  # the dots spinner's frames
    assert len(spinner) >= 3
    sandbox_frames = [t for t, f in frames if "running the tests in the sandbox" in f]
    assert sandbox_frames[-1] - sandbox_frames[0] >= SLEEP_SECONDS - 1.5
    assert "resolved" in text


@pytest.mark.slow
@needs_sandbox
def test_a_piped_run_reports_progress_on_stderr(data_dir: Path, tmp_path: Path) -> None:
    script = scripts.slow_test(tmp_path / "slow.yaml", "test_wait.py", SLEEP_SECONDS)
    for mode, expect in (("auto", "step verify · 'Wait for a slow test' · attempt 1"),
                         ("json", '"kind": "step"')):
        done = subprocess.run(
            [*KERNEL, "solve", "Wait for a slow test", "--proposer", "scripted", "--script",
             str(script), "--budget", "1", "--json", "--progress", mode],
            env=_env(data_dir, f"progress-{mode}"), capture_output=True, text=True,
            timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["status"] == "resolved"  # stdout is the result alone
        assert expect in done.stderr
        if mode == "json":
            events = [json.loads(line) for line in done.stderr.splitlines()]
            assert {"what": "run_tests", "kind": "call"}.items() <= next(
                e for e in events if e["what"] == "run_tests").items()
            # the sandbox run's flat charge, where the call ends
            assert {"what": "run_tests", "kind": "done", "cost_usd": 0.01}.items() <= next(
                e for e in events if e["what"] == "run_tests" and e["kind"] == "done").items()
        else:
            assert "call running the tests in the sandbox" in done.stderr
            assert re.search(r"done run tests .*· \$0\.0100$",
                             done.stderr, flags=re.M), done.stderr


def test_a_call_whose_request_lacks_the_goals_summary_is_named_by_it() -> None:
    """Tests in the sandbox and intake questions carry only the goal's id: the line names
    the goal as its step did, not as ``node:…``."""
    from kernel.runtime import progress

    seen: list[progress.Event] = []
    with progress.watching(seen.append):
        progress.report("step", "verify", "node:01TESTGOAL", "Wait for a slow test", 1)
        progress.report("call", "run_tests", "node:01TESTGOAL")
        progress.tell(progress.current(), progress.Event("done", "run_tests",
                                                         "node:01TESTGOAL", took=1.0))
        progress.report("call", "run_tests", "node:01UNSEEN")
    assert [e.goal for e in seen] == ["Wait for a slow test"] * 3 + [None]
