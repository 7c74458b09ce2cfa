"""A step driven without a store or a run's context: a fake read-only view, and a driver
that answers each request a step yields from a script and returns what it asked for and
what it returned."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kernel.core.confidence import PathNode
from kernel.core.constraints import Signature
from kernel.core.dag import DagNode
from kernel.core.envelopes import Attempt, Constraint, ToolPlan
from kernel.core.goal_node import GoalNode
from kernel.core.registry import Candidate
from kernel.core.state_machine import Status
from kernel.kg.failures import Diagnosis, normalize
from kernel.proposals import Proposal
from kernel.protocol.solve_models import ResolutionOutput
from kernel.protocol.suggestion_models import Suggestion
from kernel.repositories.knowledge import Coupling
from kernel.runtime.kernel import SolveConfig
from kernel.solve.effects import Done, Effects, Observe, Recall, Request, asking_nothing
from kernel.solve.perform import first_request

N = TypeVar("N")


def goal(goal_id: str = "goal:a", **fields: Any) -> GoalNode:
    """A goal as a step reads it, with ``fields`` over plain defaults."""
    base: dict[str, Any] = {
        "id": goal_id, "run_id": "run:1", "root_id": "goal:root", "parent_id": "goal:root",
        "seq": 1, "depth": 1, "description": "add two numbers", "summary": "add",
        "modality": "code", "status": Status.VERIFYING, "tau_local": 0.7,
        "tau_global": 0.5, "attempt_count": 1, "max_attempts": 3}
    return GoalNode.model_validate({**base, **fields})


def constraint(cid: str, title: str, **fields: Any) -> Constraint:
    return Constraint.model_validate({
        "id": cid, "title": title, "type": "semantic", "domain": "code",
        "provenance": {"source": "human"}, **fields})


def proposal(output: Any) -> Proposal[Any]:
    """A model's answer as the loop sends it to a step."""
    return Proposal(output=output, cost_usd=0.01, seconds=1.0, metadata={},
                    ledger_index=0, ledger_hash="0" * 64, replayed=False)


@dataclass(frozen=True)
class FakePolicy:
    """The sandbox's terms as a prompt tells them."""

    python_packages: tuple[str, ...] = ("pytest",)
    network_hosts: tuple[str, ...] = ()
    max_wall_seconds: float = 30.0
    max_memory_bytes: int = 1 << 30
    max_processes: int = 64
    max_workspace_bytes: int = 1 << 26
    max_workspace_files: int = 500
    max_file_bytes: int = 1 << 20
    max_tmp_bytes: int = 1 << 26


@dataclass
class FakeView:
    """``StepView`` over plain data: goals by id, roles by goal, constraints by id."""

    goals: dict[str, GoalNode] = field(default_factory=dict)
    role_ids: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    known: dict[str, Constraint] = field(default_factory=dict)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    from_above: dict[str, dict[str, Any]] = field(default_factory=dict)
    records: dict[str, Callable[[], Any]] = field(default_factory=dict)
    woken: dict[str, list[str]] = field(default_factory=dict)
    facts: dict[str, tuple[dict[str, float], dict[str, list[str]]]] = field(
        default_factory=dict)
    config: SolveConfig = field(default_factory=SolveConfig)
    paths: dict[str, list[PathNode]] = field(default_factory=dict)
    run_id: str = "run:1"
    # what the graph knows of goals like this one, by (goal, step): rows by query
    histories: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    identified: dict[str, dict[str, Any]] = field(default_factory=dict)
    # the registry: candidates by capability, and what it says of each resolver
    providers: dict[str, list[Candidate]] = field(default_factory=dict)
    registry: list[dict[str, Any]] = field(default_factory=list)
    attempts: dict[str, list[Attempt]] = field(default_factory=dict)
    known_causes: dict[str, str] = field(default_factory=dict)  # a slug -> the mode it joins
    coupled: list[Coupling] = field(default_factory=list)
    resolutions: dict[str, ResolutionOutput] = field(default_factory=dict)
    # sigma_path values by goal, and the rows that differ from what is stored
    sigmas: dict[str, tuple[dict[str, float], list[dict[str, object]]]] = field(
        default_factory=dict)
    in_repository: bool = False
    kinds: dict[str, str] = field(default_factory=dict)  # a registered tool's kind
    repo_runs: dict[str, Any] = field(default_factory=dict)  # by output content
    hashes: dict[str, str] = field(default_factory=dict)  # an artifact's sha256
    offered: list[Suggestion] = field(default_factory=list)
    weighed: dict[str, str] = field(default_factory=dict)  # a candidate's verification
    seen_before: list[dict[str, Any]] = field(default_factory=list)
    policy: Any = field(default_factory=FakePolicy)
    plans: dict[str, ToolPlan] = field(default_factory=dict)
    shipped: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by goal
    verified_output: dict[str, Any] | None = None  # the last attempt's output, shown
    repo_views: dict[str, dict[str, Any]] = field(default_factory=dict)  # by goal
    # a goal's children by decomposition key, and as the DAG reads them (by goal)
    kept: dict[str, dict[str, str]] = field(default_factory=dict)
    dag: dict[str, list[DagNode]] = field(default_factory=dict)
    resolved_above: dict[str, list[str]] = field(default_factory=dict)  # what children inherit
    left: dict[str, int] = field(default_factory=dict)  # micro-dollars a goal has left
    live_leaves: list[str] = field(default_factory=list)  # the run's, by id
    least_sigma: float | None = None  # the least sigma_path of the live leaves
    below: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # a goal's subtree

    def path(self, goal_id: str) -> list[PathNode]:
        return self.paths[goal_id]

    def goal(self, goal_id: str) -> GoalNode:
        return self.goals[goal_id]

    def roles(self, goal_id: str) -> dict[str, list[str]]:
        return {"eligible": [], "selected": [], "core": [], "coupling": [], "owed": [],
                "inherited": [], **self.role_ids.get(goal_id, {})}

    def constraints(self, ids: list[str]) -> list[Constraint]:
        return [self.known[i] for i in sorted(set(ids))]

    def stored_output(self, artifact_id: str | None) -> dict[str, Any] | None:
        return None if artifact_id is None else self.outputs[artifact_id]

    def inherited(self, goal: GoalNode) -> dict[str, Any] | None:
        return self.from_above.get(goal.id)

    def leaf_record(self, goal: GoalNode) -> Recall | None:
        read = self.records.get(goal.id)
        return None if read is None else Recall("reuse/classify_leaf", goal.id, read)

    def wakes(self, goal: GoalNode) -> list[str]:
        return self.woken.get(goal.id, [])

    def subtree_facts(self, goal: GoalNode) -> tuple[dict[str, float], dict[str, list[str]]]:
        return self.facts[goal.id]

    def history(self, goal: GoalNode, step: str) -> Observe:
        rows = self.histories.get((goal.id, step), {})
        return Observe(f"history/{step}", goal.id, lambda: rows)

    def identified_record(self, goal: GoalNode, inherited: list[Constraint]) -> Recall:
        found = self.identified.get(goal.id)
        return Recall("reuse/identify", goal.id, lambda: found)

    def pattern(self, summary: str, signature: Signature) -> dict[str, Any]:
        return {"id": f"pattern:{summary}", "signature": list(signature)}

    def candidates(self, capabilities: list[str], modality: str | None) -> list[Candidate]:
        if not capabilities:  # every resolver
            return list({c.id: c for cs in self.providers.values() for c in cs}.values())
        return list({c.id: c for cap in capabilities
                     for c in self.providers.get(cap, [])}.values())

    def registered(self) -> list[dict[str, Any]]:
        return self.registry

    def tried(self, goal: GoalNode) -> list[Attempt]:
        return self.attempts.get(goal.id, [])

    def diagnosis(self, name: str, description: str, diagnosed: bool = True) -> Diagnosis:
        slug = normalize(name) if diagnosed else f"undiagnosed_{normalize(name)}"
        joins = self.known_causes.get(slug, f"failure:{slug}") if diagnosed else f"failure:{slug}"
        return Diagnosis(joins, slug, description, [0.0], diagnosed)

    def couplings(self, root_id: str) -> list[Coupling]:
        return self.coupled

    def resolution(self, artifact_id: str) -> ResolutionOutput:
        return self.resolutions[artifact_id]

    def subtree_sigmas(self, goal_id: str, sigma_v: float | None = None,
                       ) -> tuple[dict[str, float], list[dict[str, object]]]:
        values, rows = self.sigmas[goal_id]
        if sigma_v is None:
            return values, rows
        return {**values, goal_id: sigma_v}, [{"id": goal_id, "sigma_path": sigma_v}]

    def resolver_kind(self, resolver_id: str) -> str | None:
        return self.kinds.get(resolver_id)

    def repo_test_inputs(self, output: ResolutionOutput) -> Any:
        return self.repo_runs[output.content]

    def artifact_sha256(self, artifact_id: str) -> str:
        return self.hashes[artifact_id]

    def suggestions(self) -> list[Suggestion]:
        return self.offered

    def weighed_verification(self, artifact_id: str) -> str | None:
        return self.weighed.get(artifact_id)

    def tool_plan(self, artifact_id: str) -> ToolPlan:
        return self.plans[artifact_id]

    def dependency_inputs(self, goal: GoalNode) -> list[dict[str, Any]]:
        return self.shipped.get(goal.id, [])

    def last_output(self, history: list[Attempt]) -> dict[str, Any] | None:
        return self.verified_output if history else None

    def repository(self, goal: GoalNode) -> dict[str, Any]:
        return self.repo_views[goal.id]

    def children_keys(self, goal_id: str) -> dict[str, str]:
        return self.kept.get(goal_id, {})

    def children(self, goal_id: str) -> list[DagNode]:
        return self.dag.get(goal_id, [])

    def inherited_by_children(self, goal_id: str) -> list[str]:
        return self.resolved_above.get(goal_id, [])

    def cost_left(self, goal_id: str) -> int:
        return self.left.get(goal_id, 0)

    def leaves(self) -> list[str]:
        return self.live_leaves

    def system_sigma(self) -> float | None:
        return self.least_sigma

    def subtree_parts(self, goal_id: str) -> list[Any]:
        return self.below.get(goal_id, [])

    def weighing_history(self, goal: GoalNode, hashes: list[str]) -> Observe:
        rows = [r for r in self.seen_before if r["sha256"] in hashes]
        return Observe("suggestion/history", goal.id, lambda: rows)


def drive(body: Effects[N] | Done[N], answers: list[Any]) -> tuple[list[Request], Done[N]]:
    """Run a step to its end, answering its requests with ``answers`` in order; the
    requests it made and what it returned. Fails if it asks more or fewer times."""
    if isinstance(body, Done):  # a step that needs no request
        body = asking_nothing(body)
    asked: list[Request] = []
    script = iter(answers)
    step = first_request(body)
    while not isinstance(step, Done):
        asked.append(step)
        step = first_request(body, next(script))
    assert next(script, None) is None, "the step asked for fewer answers than scripted"
    return asked, step
