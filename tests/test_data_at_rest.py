"""The data dir and everything in it (AOF, secret, config, artifacts, embedding cache)
are the owner's only, after a real solve in a fresh data dir."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from kernel.paths import seeds_dir
from kernel.store.embedded_server import EmbeddedServer
from tests.sandbox_support import needs_sandbox

pytestmark = pytest.mark.slow  # a CLI solve with the sandbox in a fresh data dir

GOAL = ("Build a Python CLI tool that reads a CSV file and outputs the top 10 rows sorted by "
        "a user-specified column")


@needs_sandbox
def test_a_fresh_data_dir_is_closed_to_others(tmp_path: Path) -> None:
    data = tmp_path / "new" / "kernel-data"
    env = {**os.environ, "KERNEL_DATA_DIR": str(data), "COLUMNS": "120"}
    kernel = [sys.executable, "-c", "from kernel.cli.app import main; main()"]
    try:
        for args in (["db", "init"],
                     ["solve", GOAL, "--proposer", "scripted", "--budget", "2",
                      "--script", str(seeds_dir() / "examples" / "csv-cli.script.yaml")]):
            done = subprocess.run([*kernel, *args], env=env, capture_output=True, text=True,
                                  timeout=300, check=False)
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    finally:
        EmbeddedServer(data).stop()
    entries = [data, *data.rglob("*")]
    names = {p.name for p in entries if p.is_file()}
    assert {"falkordb.secret", "falkordb.conf", "embeddings.sqlite"} <= names, names
    assert any(".aof" in name for name in names), names
    assert any(p.parent.parent.name == "artifacts" for p in entries if p.is_file())
    opened = [f"{p} {stat.filemode(p.lstat().st_mode)}" for p in entries
              if p.lstat().st_mode & 0o077 and not p.is_symlink()]
    assert opened == []
