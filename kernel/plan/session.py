"""Starting a planning run: the goal, a planning budget, proposals from a script, an
example, or Claude."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kernel.errors import ConfigError
from kernel.paths import seeds_dir
from kernel.plan.planner import make_plan
from kernel.proposals import Proposer
from kernel.schema import init_schema
from kernel.solve.kernel import SolveConfig
from kernel.solve.start import start
from kernel.store.base import GraphStore
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import load_script

EXAMPLES = seeds_dir() / "examples"


def example_names() -> list[str]:
    return sorted(p.name.removesuffix(".plan.yaml") for p in EXAMPLES.glob("*.plan.yaml"))


def example_script(name: str) -> Path:
    path = EXAMPLES / f"{name}.plan.yaml"
    if not path.exists():
        raise ConfigError(f"no example {name!r}; the examples are: {', '.join(example_names())}")
    return path


def example_goal(path: Path) -> tuple[str, list[dict[str, Any]]]:
    script = load_script(path)
    if script.example is None:
        raise ConfigError(f"{path} is a script without an example goal")
    return script.example.goal, list(script.example.verifications)


def plan_goal(store: GraphStore, data_dir: Path, goal: str, proposer: Proposer,
              proposer_config: dict[str, Any], budget_usd: float, time_seconds: float,
              verifications: list[dict[str, Any]] | None = None,
              max_wall_seconds: float = 600.0) -> dict[str, Any]:
    init_schema(store)
    kernel, root = start(store, goal, [], budget_usd, time_seconds, proposer, data_dir,
                         default_workspace_root(), SolveConfig(max_wall_seconds=max_wall_seconds),
                         extra={**proposer_config, "mode": "plan"})
    return make_plan(kernel, root, verifications)
