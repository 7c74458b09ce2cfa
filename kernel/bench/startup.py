"""Start-up benchmark: the wall time of ``kernel --help``, ``kernel status`` and ``kernel
runs`` as a person runs them (a new process each time), beside the time to import the
libraries every command that reads the store needs, measured in the same sitting; and
the ingest example's scripted solve in a fresh data dir (a new embedded server, no
embedding cache), where start-up is most of the run. Each command's heaviest top-level
imports (``-X importtime``, one extra run) are listed beside it, so a library that a
command loads without needing it shows up by name.

Start-up on a shared machine moves with its load; the ratio to the libraries' own import
time, sampled in turn with the commands, is what stays comparable between sittings.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kernel.bench.examples import EXAMPLES
from kernel.bench.store import Figure
from kernel.errors import KernelError
from kernel.settings import KernelSettings
from kernel.store.embedded_server import EmbeddedServer

COMMANDS = (("--help",), ("status",), ("runs",))
TOP_IMPORTS = 5
# What `kernel status` cannot start without: the CLI framework, its renderer, the
# settings and the store's client.
LIBRARIES = "import typer, rich.console, rich.table, pydantic_settings, falkordb"


def kernel_command() -> list[str]:
    """The installed ``kernel`` script beside this interpreter, or its equivalent."""
    script = Path(sys.executable).with_name("kernel")
    if script.exists():
        return [str(script)]
    found = shutil.which("kernel")
    return [found] if found else [sys.executable, "-c", "from kernel.cli.app import main; main()"]


def _seconds(name: str, argv: list[str], env: dict[str, str]) -> float:
    """How long one run took; a run that fails measures nothing, so it stops the bench."""
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise KernelError(f"'{name}' exited with {done.returncode}: {said}")
    return took


def bench_startup(settings: KernelSettings, samples: int, solves: int) -> list[Figure]:
    """Median and fastest wall time per command over ``samples`` rounds, after one round
    that warms the file caches and the embedded server; the libraries and a bare
    interpreter are timed in the same rounds."""
    env = {**os.environ, "KERNEL_GRAPH": settings.graph, "KERNEL_DATA_DIR": str(settings.data_dir),
           "KERNEL_GRAPH_NAME": settings.graph_name}
    kernel = kernel_command()
    runs: dict[str, list[str]] = {f"kernel {' '.join(args)}": [*kernel, *args]
                                  for args in COMMANDS}
    runs["import of the libraries"] = [sys.executable, "-c", LIBRARIES]
    runs["bare interpreter"] = [sys.executable, "-c", "pass"]
    times: dict[str, list[float]] = {name: [] for name in runs}
    for round_number in range(samples + 1):
        for name, argv in runs.items():
            took = _seconds(name, argv, env)
            if round_number:
                times[name].append(took)
    floor = statistics.median(times["import of the libraries"])
    figures = []
    for name, taken in times.items():
        figures.append(Figure(f"{name}, median", statistics.median(taken), "s"))
        figures.append(Figure(f"{name}, fastest", min(taken), "s"))
        if name.startswith("kernel "):
            figures.append(Figure(f"{name} / import of the libraries (medians)",
                                  statistics.median(taken) / floor, "x"))
    for name, argv in runs.items():
        if name.startswith("kernel "):
            figures.extend(_heaviest_imports(name, argv, env))
    if solves:
        taken = [_fresh_solve(kernel, env) for _ in range(solves)]
        figures.append(Figure("ingest example, scripted, fresh data dir, median",
                              statistics.median(taken), "s"))
        figures.append(Figure("ingest example, scripted, fresh data dir, fastest",
                              min(taken), "s"))
        figures.extend(_fresh_solve_imports(kernel, env))
    return figures


def top_imports(importtime: str, count: int = TOP_IMPORTS) -> list[tuple[str, float]]:
    """The ``count`` top-level imports that took longest (cumulative seconds), read from
    the ``-X importtime`` lines on a process's stderr."""
    found: list[tuple[str, float]] = []
    for line in importtime.splitlines():
        if not line.startswith("import time:"):
            continue
        _, cumulative, module = line.split("|", 2)
        if module.startswith(" ") and not module.startswith("  "):  # one space: top level
            with contextlib.suppress(ValueError):
                found.append((module.strip(), int(cumulative) / 1e6))
    return sorted(found, key=lambda item: -item[1])[:count]


def _heaviest_imports(name: str, argv: list[str], env: dict[str, str]) -> list[Figure]:
    done = subprocess.run(argv, env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=False)
    return [Figure(f"{name} imports {module}", seconds, "s")
            for module, seconds in top_imports(done.stderr)]


def _fresh_solve_imports(kernel: list[str], env: dict[str, str]) -> list[Figure]:
    example = next(e for e in EXAMPLES if e.name == "ingest-pipeline")
    with tempfile.TemporaryDirectory(prefix="kernel-startup-") as data_dir:
        fresh = {**env, "KERNEL_DATA_DIR": data_dir, "KERNEL_GRAPH": "embedded",
                 "KERNEL_GRAPH_NAME": "kernel"}
        try:
            return _heaviest_imports("kernel solve (ingest example)",
                                     [*kernel, *example.command()], fresh)
        finally:
            EmbeddedServer(Path(data_dir)).stop()


def _fresh_solve(kernel: list[str], env: dict[str, str]) -> float:
    """One scripted solve of the ingest example in a new data dir, its server stopped and
    the directory removed afterwards (neither timed)."""
    example = next(e for e in EXAMPLES if e.name == "ingest-pipeline")
    with tempfile.TemporaryDirectory(prefix="kernel-startup-") as data_dir:
        fresh = {**env, "KERNEL_DATA_DIR": data_dir, "KERNEL_GRAPH": "embedded",
                 "KERNEL_GRAPH_NAME": "kernel"}
        try:
            return _seconds("kernel solve (ingest example)", [*kernel, *example.command()],
                            fresh)
        finally:
            EmbeddedServer(Path(data_dir)).stop()
