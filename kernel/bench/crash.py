"""The kill -9 check: crash ``kernel solve`` at random statements, resume, compare.

For each scripted example an uninterrupted run gives the reference: its summary hash,
its attempts and its spends, and how many store statements it made. Each trial then
runs the same example (same run id, its own graph) in a process that kills itself with
SIGKILL just before or just after a statement chosen at random, resumes it with
``kernel resume`` (sometimes killing the resume too), and checks that the run ends with
the reference's summary hash, attempts and spends: nothing lost, nothing doubled.

The CSV CLI example runs generated code in the sandbox, and the seconds a real test run
takes differ between any two executions, killed or not. For it the check compares the
committed state with every measured duration left out (and the ledger by its size, not
its head, since the recorded sandbox reports carry those durations).
"""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ulid import ULID

from kernel.bench.examples import EXAMPLES, Example
from kernel.core.envelopes import canonical_json
from kernel.core.summary import summary, summary_hash
from kernel.repositories import runs
from kernel.settings import KernelSettings
from kernel.store import open_store


@dataclass(frozen=True)
class Outcome:
    """What a finished run committed, as compared between a trial and the reference."""

    summary_hash: str
    attempts: int
    spends: int
    spent_micros: int


@dataclass
class Trial:
    example: str
    kill_at: list[str]  # "before 37", "after 112", ... one per kill
    ok: bool = False
    detail: str = ""


@dataclass
class ExampleReport:
    example: str
    statements: int
    reference: Outcome
    trials: list[Trial] = field(default_factory=list)

    @property
    def identical(self) -> int:
        return sum(t.ok for t in self.trials)


def _outcome(settings: KernelSettings, run_id: str, measured: bool) -> Outcome:
    with open_store(settings) as store:
        data = summary(store, run_id)
        digest = _unmeasured_hash(data) if measured else summary_hash(store, run_id)
    spends = [e for e in data["budget"] if e["kind"] == "spend"]
    return Outcome(digest, len(data["attempts"]), len(spends),
                   sum(int(e["cost"] or 0) for e in spends))


def _unmeasured_hash(data: dict[str, Any]) -> str:
    """The summary without wall-clock durations (and the ledger by its size)."""
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if not k.startswith("time")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    kept = strip({**data, "ledger": {"size": data["ledger"]["size"]}})
    return hashlib.sha256(canonical_json(kept).encode()).hexdigest()


def _exists(settings: KernelSettings, run_id: str) -> bool:
    with open_store(settings) as store:
        return runs.get(store, run_id) is not None


def _drop(settings: KernelSettings) -> None:
    with open_store(settings) as store:
        store.drop_all()


class _Child:
    """Runs the ``kernel`` command in a child process with a kill armed."""

    def __init__(self, data_dir: Path, ulid: ULID, python: str) -> None:
        self.data_dir, self.ulid, self.python = data_dir, ulid, python

    def run(self, graph: str, args: list[str], kill_at: int = 0, when: str = "after",
            count_file: Path | None = None, only: str = "",
            store_env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """``store_env`` (KERNEL_GRAPH, NEO4J_*) points the child at another store than the
        embedded graph named ``graph``."""
        env = {**os.environ, "KERNEL_DATA_DIR": str(self.data_dir), "KERNEL_GRAPH": "embedded",
               "KERNEL_GRAPH_NAME": graph, "KERNEL_CRASH_ULID": str(self.ulid),
               "KERNEL_CRASH_AT": str(kill_at), "KERNEL_CRASH_WHEN": when,
               "KERNEL_CRASH_COUNT": str(count_file or ""), "KERNEL_CRASH_ON": only,
               **(store_env or {})}
        return subprocess.run([self.python, "-m", "kernel.cli.crash_child", *args], env=env,
                              capture_output=True, text=True, timeout=900, check=False)


def check_example(example: Example, data_dir: Path, trials: int, rng: random.Random,
                  python: str = sys.executable,
                  on_trial: Callable[[Trial], None] | None = None) -> ExampleReport:
    ulid = ULID()
    run_id = f"run:{ulid}"
    child = _Child(data_dir, ulid, python)
    base = f"crash-{example.name}-{str(ulid)[-6:].lower()}"
    reference = KernelSettings(data_dir=data_dir, graph="embedded", graph_name=f"{base}-ref")
    with tempfile.TemporaryDirectory() as scratch:
        counted = Path(scratch) / "statements"
        done = child.run(reference.graph_name, example.command(), count_file=counted)
        if done.returncode != 0:
            raise RuntimeError(f"{example.name}: the uninterrupted run exited "
                               f"{done.returncode}: {done.stderr.strip()[-400:]}")
        statements = int(counted.read_text())
    report = ExampleReport(example.name, statements,
                           _outcome(reference, run_id, example.measured))
    _drop(reference)
    for number in range(trials):
        graph = KernelSettings(data_dir=data_dir, graph="embedded",
                               graph_name=f"{base}-{number}")
        trial = Trial(example.name, [])
        try:
            trial.ok, trial.detail = _trial(example, child, graph, run_id, report, rng, trial)
        finally:
            _drop(graph)
        report.trials.append(trial)
        if on_trial is not None:
            on_trial(trial)
    return report


def _trial(example: Example, child: _Child, graph: KernelSettings, run_id: str,
           report: ExampleReport, rng: random.Random, trial: Trial) -> tuple[bool, str]:
    kill_at, when = rng.randint(1, report.statements), rng.choice(("before", "after"))
    trial.kill_at.append(f"{when} {kill_at}")
    first = child.run(graph.graph_name, example.command(), kill_at, when)
    if first.returncode != -9:
        return False, f"solve was not killed (exit {first.returncode}): {first.stderr[-300:]}"
    if "Traceback" in first.stderr:
        return False, f"solve printed a traceback: {first.stderr[-300:]}"
    for _ in range(3):  # resumes can be killed too; the last one is not
        resume_kill = rng.randint(1, max(report.statements // 2, 1)) \
            if len(trial.kill_at) < 3 and rng.random() < 0.3 else 0
        # killed before its run existed: there is nothing to resume, so solve again
        again = ["resume", run_id, "--json"] if _exists(graph, run_id) else example.command()
        done = child.run(graph.graph_name, again, resume_kill, when)
        if done.returncode == -9 and resume_kill:
            trial.kill_at.append(f"resume {when} {resume_kill}")
            continue
        if done.returncode != 0:
            return False, f"resume exited {done.returncode}: {done.stderr.strip()[-400:]}"
        break
    else:
        return False, "the run never finished"
    outcome = _outcome(graph, run_id, example.measured)
    if outcome != report.reference:
        differs = [k for k, v in asdict(outcome).items() if asdict(report.reference)[k] != v]
        return False, f"differs from the uninterrupted run in {', '.join(differs)}"
    return True, ""


def crash_check(data_dir: Path, trials: int, seed: int, examples: tuple[Example, ...] = EXAMPLES,
                on_trial: Callable[[Trial], None] | None = None) -> list[ExampleReport]:
    rng = random.Random(seed)
    return [check_example(e, data_dir, trials, rng, on_trial=on_trial) for e in examples]
