"""The flywheel experiment: the same related goals, solved twice in one graph.

Both passes use the same scripted proposals, so every difference between them is the
knowledge graph's doing: learned routing, tools built or hired in the first pass found
again, history in the prompts. Per pass it counts model calls and their cost, retries
(attempts after a goal's first), builds, and the questions put to a person. A person's
answers come from the experiment file (the tool files they would hand over).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.ledger import load_entries
from kernel.errors import ConfigError, yaml_problem
from kernel.paths import seeds_dir
from kernel.protocol import HireAnswer
from kernel.repositories import goals, requests
from kernel.repositories.requests import list_requests, record_answer
from kernel.runtime.inputs import RunInputs
from kernel.runtime.installed import resolvers
from kernel.runtime.start import start
from kernel.solve.dispatch import solve
from kernel.solve.session import resume
from kernel.solve.tools import load_tool_file
from kernel.store.base import GraphStore
from kernel.user_files import read_user_text

EXAMPLE = seeds_dir() / "examples" / "flywheel"


class _Goal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    goal: str
    constraints: list[dict[str, Any]] = Field(default_factory=list)


class Experiment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(ge=1, le=1)
    budget_usd: float = Field(gt=0)
    time_seconds: float = Field(gt=0)
    max_attempts: int = Field(ge=1)
    answers: dict[str, str] = Field(default_factory=dict)
    goals: list[_Goal] = Field(min_length=1)


def load_experiment(path: Path) -> Experiment:
    text = read_user_text(path, f"experiment {path}")
    try:
        return Experiment.model_validate(yaml.safe_load(text))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: cannot read the experiment: {yaml_problem(exc)}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"{path}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


@dataclass
class PassFigures:
    number: int
    goals: int = 0
    resolved: int = 0
    model_calls: int = 0
    model_cost_usd: float = 0.0
    reused_calls: int = 0  # requests served from an identical one answered before
    retries: int = 0
    builds: list[str] = field(default_factory=list)  # capabilities built
    hire_requests: list[str] = field(default_factory=list)  # fingerprints asked
    # model calls on each leaf goal that resolved on its first attempt without growing
    happy_leaf_calls: list[int] = field(default_factory=list)
    calls_by_operation: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"pass": self.number, "goals": self.goals, "resolved": self.resolved,
                "model_calls": self.model_calls, "model_cost_usd": round(self.model_cost_usd, 4),
                "reused_calls": self.reused_calls,
                "retries": self.retries, "builds": len(self.builds),
                "hire_requests": len(self.hire_requests),
                "built": sorted(self.builds), "asked": sorted(self.hire_requests),
                "happy_leaves": len(self.happy_leaf_calls),
                "max_calls_per_happy_leaf": max(self.happy_leaf_calls, default=0),
                "calls_by_operation": dict(sorted(self.calls_by_operation.items()))}


def _core(specs: list[dict[str, Any]]) -> list[ConstraintSpec]:
    return [ConstraintSpec(provenance=Provenance(source="human"), **spec) for spec in specs]


def run_experiment(store: GraphStore, folder: Path = EXAMPLE,
                   data_dir: Path | None = None) -> list[PassFigures]:
    """Both passes, in ``store`` (a graph the caller provides: scratch, normally). With
    ``data_dir`` the runs' artifacts are kept there (a graph kept to explore), otherwise in
    a temporary directory that goes with the scratch graph."""
    experiment = load_experiment(folder / "goals.yaml")
    script = folder / "script.yaml"
    passes = []
    with tempfile.TemporaryDirectory() as tmp:
        for number in (1, 2):
            figures = PassFigures(number)
            for goal in experiment.goals:
                _solve_one(store, experiment, folder, goal, script, data_dir or Path(tmp),
                           figures)
            passes.append(figures)
    return passes


def _happy_leaf(node: Mapping[str, Any], parents: set[str | None]) -> bool:
    """A goal without children resolved by its first attempt (no build, no retry)."""
    return node.get("status") == "resolved" and node["id"] not in parents and \
        int(node.get("attempt_count") or 0) == 1 and not node.get("builds_capability")


def _solve_one(store: GraphStore, experiment: Experiment, folder: Path, goal: _Goal,
               script: Path, data_dir: Path, figures: PassFigures) -> None:
    proposer = resolvers().scripted(script, None)
    asked_before = {r["id"] for r in list_requests(store)}
    inputs = RunInputs(goal=goal.goal, budget_usd=experiment.budget_usd,
                       time_seconds=experiment.time_seconds,
                       max_attempts=experiment.max_attempts, core=_core(goal.constraints))
    kernel, root = start(store, inputs, proposer, data_dir, resolvers().sandbox.default_root())
    outcome = solve(kernel, root)
    while outcome.waiting_on:  # a person answers from the experiment's tool files
        for request_id in outcome.waiting_on:
            request = requests.get(store, request_id)
            tag = request["capability_tag"] if request else ""
            if tag not in experiment.answers:
                raise ConfigError(f"the experiment has no answer for capability '{tag}': add "
                                  f"it under 'answers' in {folder / 'goals.yaml'}")
            tool = load_tool_file(folder / experiment.answers[tag])
            record_answer(store, request_id, HireAnswer(kind="resolver", tool=tool))
        outcome = resume(store, kernel.run.run_id, data_dir, proposer=proposer)
    figures.goals += 1
    figures.resolved += outcome.status == "resolved"
    per_goal: dict[str | None, int] = {}
    for entry in load_entries(store, kernel.run.run_id)[2]:
        if entry.kind == "proposal" and entry.source == proposer.source:
            if "reused" in entry.data():  # an identical request answered before: not asked
                figures.reused_calls += 1
                continue
            figures.model_calls += 1
            figures.model_cost_usd += float(entry.data()["response"]["cost_usd"])
            per_goal[entry.goal_id] = per_goal.get(entry.goal_id, 0) + 1
            figures.calls_by_operation[entry.operation] = \
                figures.calls_by_operation.get(entry.operation, 0) + 1
    nodes = goals.tree(store, kernel.run.run_id)
    parents = {n.get("parent_id") for n in nodes}
    for node in nodes:
        figures.retries += max(int(node.get("attempt_count") or 0) - 1, 0)
        built = node["builds_capability"]
        if built:
            figures.builds.append(built)
        if _happy_leaf(node, parents):
            figures.happy_leaf_calls.append(per_goal.get(node["id"], 0))
    figures.hire_requests += [r["fingerprint"] for r in list_requests(store)
                              if r["id"] not in asked_before]
