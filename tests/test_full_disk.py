"""A data dir on a filesystem that fills up mid-run: the kernel says which filesystem is
full and how much it needs, exits 3, and ``kernel resume`` finishes the run once there
is room, with the summary hash of a run never interrupted.

The data dir is a 48 MiB tmpfs mounted for the test, so only root can run it. On the
embedded store the store's own journal is on it (the store stops); on Neo4j the
artifacts are (the kernel's own write fails)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernel.paths import seeds_dir
from kernel.store import GraphStore
from tests.conftest import store_env
from tests.sandbox_support import needs_sandbox

GOAL = ("Build a Python CLI tool that reads a CSV file and outputs the top 10 rows sorted "
        "by a user-specified column")
SOLVE = ["solve", GOAL, "--proposer", "scripted", "--script",
         str(seeds_dir() / "examples" / "csv-cli.script.yaml"), "--budget", "2", "--time", "600"]
KERNEL = [str(Path(sys.executable).with_name("kernel"))]


@pytest.fixture
def small_filesystem(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a size-limited tmpfs for the data dir needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield mount
    finally:
        with contextlib.suppress(Exception):
            subprocess.run([*KERNEL, "db", "stop"], env={**os.environ,
                           "KERNEL_DATA_DIR": str(mount / "data")}, capture_output=True,
                           timeout=60, check=False)
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(mount: Path) -> None:
    with contextlib.suppress(OSError), open(mount / "filler", "wb") as out:
        while True:
            out.write(b"\0" * (1 << 20))
            out.flush()


@pytest.mark.slow
@needs_sandbox
def test_a_full_data_dir_stops_the_run_saying_so_and_resume_finishes_it(
        initialised_graph: GraphStore, small_filesystem: Path, tmp_path: Path) -> None:
    env = {**os.environ, **store_env(initialised_graph, small_filesystem / "data"),
           "COLUMNS": "400"}
    run = subprocess.Popen([*KERNEL, *SOLVE], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    assert run.stderr is not None
    for line in run.stderr:
        if "step verify" in line:  # the first attempt is being verified: fill the disk
            _fill(small_filesystem)
            break
    out, err = run.communicate(timeout=600)
    assert run.returncode == 3, out + err
    said = " ".join(err.split())
    assert f"the filesystem mounted at {small_filesystem} is full" in said, said
    assert "at least 64.0 MiB needed" in said
    run_id = re.search(r"kernel resume (run:\w+)", said)
    assert run_id, said
    assert "Traceback" not in err and not list(small_filesystem.glob("data/logs/crash-*"))

    (small_filesystem / "filler").unlink()
    resumed = subprocess.run([*KERNEL, "resume", run_id.group(1), "--json", "--progress",
                              "none"], env=env, capture_output=True, text=True, timeout=600,
                             check=False)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    # the same run never interrupted, in a fresh embedded deployment, ends the same way
    fresh = {k: v for k, v in env.items() if not k.startswith(("KERNEL_GRAPH", "NEO4J_"))}
    fresh["KERNEL_DATA_DIR"] = str(tmp_path / "again")
    again = subprocess.run([*KERNEL, *SOLVE, "--json", "--progress", "none"], env=fresh,
                           capture_output=True, text=True, timeout=600, check=False)
    try:
        assert again.returncode == 0, again.stdout + again.stderr
        first, second = json.loads(resumed.stdout), json.loads(again.stdout)
        assert (first["status"], first["sigma_system"]) == ("resolved", second["sigma_system"])
        assert _final_text(first, env) == _final_text(second, fresh)
    finally:
        subprocess.run([*KERNEL, "db", "stop"], env=fresh, capture_output=True, timeout=60,
                       check=False)


def _final_text(outcome: dict[str, object], env: dict[str, str]) -> str:
    shown = subprocess.run([*KERNEL, "artifact", "show", str(outcome["final_artifact"])],
                           env=env, capture_output=True, text=True, timeout=120, check=True)
    return shown.stdout
