"""A person's read-only statement cannot grow the embedded server by gibibytes: one that
builds a huge value is stopped at the memory a statement may use."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernel.store.embedded_server import EmbeddedServer
from kernel.store.falkordb_backend import ADHOC_TIMEOUT_MS

pytestmark = pytest.mark.slow

# 'x' doubled 29 times: a 512 MiB string
HUGE = "RETURN size(reduce(s = 'x', i IN range(1, 29) | s + s)) AS n"


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    EmbeddedServer(tmp_path).stop()


def _kernel(data_dir: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KERNEL_DATA_DIR": str(data_dir), "KERNEL_GRAPH_NAME": "limits"}
    return subprocess.run([sys.executable, "-c", "from kernel.cli.app import main; main()",
                           *args], env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)


def _server_kib(data_dir: Path, field: str) -> int:
    pid = EmbeddedServer(data_dir).status().pid
    assert pid is not None
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(field)


def test_a_read_only_query_cannot_grow_the_server_by_gibibytes(data_dir: Path) -> None:
    assert _kernel(data_dir, "query", "RETURN 1 AS one").returncode == 0
    before = _server_kib(data_dir, "VmRSS")
    done = _kernel(data_dir, "query", HUGE)
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode in (1, 2) and "MiB" in said, said
    grown = (_server_kib(data_dir, "VmHWM") - before) / 1024
    assert grown < 768, f"the server grew by {grown:.0f} MiB"


ENDLESS = "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b RETURN count(*) AS n"


def test_endless_queries_a_client_abandons_do_not_keep_the_server_busy(data_dir: Path) -> None:
    """Three endless read-only statements whose clients are killed: the server stops each
    at the ad-hoc timeout, so the next statement answers, and one left to run is refused
    with the timeout and how to narrow it."""
    assert _kernel(data_dir, "query", "RETURN 1 AS one").returncode == 0
    env = {**os.environ, "KERNEL_DATA_DIR": str(data_dir), "KERNEL_GRAPH_NAME": "limits"}
    clients = [subprocess.Popen([sys.executable, "-c", "from kernel.cli.app import main; main()",
                                 "query", ENDLESS], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL) for _ in range(3)]
    time.sleep(2)
    for client in clients:
        client.kill()
        client.wait()
    started = time.monotonic()
    after = _kernel(data_dir, "query", "RETURN 2 AS two", timeout=60)
    assert after.returncode == 0 and "2" in after.stdout, after.stderr
    assert time.monotonic() - started < ADHOC_TIMEOUT_MS / 1000 + 10
    alone = _kernel(data_dir, "query", ENDLESS, timeout=60)
    said = " ".join(alone.stderr.split())
    assert alone.returncode == 2 and f"ran past {ADHOC_TIMEOUT_MS // 1000} s" in said, said
