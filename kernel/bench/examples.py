"""The scripted examples the kill -9 check (and its tests) run, named without importing
the kernel, so ``kernel bench --help`` can list them at once."""

from __future__ import annotations

from dataclasses import dataclass

from kernel.paths import seeds_dir

EXAMPLES_DIR = seeds_dir() / "examples"  # the checkout's seeds/, or the wheel's bundled copy


@dataclass(frozen=True)
class Example:
    name: str
    goal: str
    args: tuple[str, ...]
    measured: bool = False  # runs real code: durations differ between any two executions
    script: str = ""  # the script's path under EXAMPLES_DIR; NAME.script.yaml when empty

    def command(self) -> list[str]:
        script = EXAMPLES_DIR / (self.script or f"{self.name}.script.yaml")
        return ["solve", self.goal, "--proposer", "scripted", "--script", str(script),
                "--json", *self.args]


EXAMPLES = (
    Example("csv-cli", "Build a Python CLI tool that reads a CSV file and outputs the top 10 "
                       "rows sorted by a user-specified column", ("--budget", "2"), measured=True),
    Example("ingest-pipeline", "Design a three-stage ingest pipeline for the nightly orders "
                               "export", ("-c", "logic:latency:sum_latency_ms <= 500",
                                          "-c", "logic:cost:cost_usd <= 2")),
    Example("launch-plan", "Plan a product launch", ()),
    # a repository goal: the wrong diff, the failing test's feedback, the right diff
    Example("bugfix", "Fix the word count: any run of whitespace separates words",
            ("--repo", str(EXAMPLES_DIR / "bugfix" / "repo")), measured=True,
            script="bugfix/script.yaml"),
)

__all__ = ["EXAMPLES", "EXAMPLES_DIR", "Example"]
