"""End-to-end paths of the SOLVE loop with scripted proposals, through the real store."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from ulid import ULID

from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.ledger import load_entries
from kernel.core.summary import summary_hash
from kernel.kg.context import StepHistory
from kernel.protocol import Estimate, ResolveRequest
from kernel.runtime.kernel import Kernel
from kernel.solve.dispatch import solve
from kernel.solve.session import replay
from kernel.store import GraphStore
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import ScriptedProposer
from tests.conftest import store_settings
from tests.solve import scripts as s
from tests.starting import start

ESSAY = "Write a release note for the new CSV tool"
PLAN = "Plan a product launch"


def _start(graph: GraphStore, tmp_path: Path, goal: str, entries: list[dict],
           budget: float = 5.0, core: list[ConstraintSpec] | None = None,
           ulid: ULID | None = None, seconds: float = 600) -> tuple[Kernel, str]:
    script = s.write(tmp_path / f"script-{len(entries)}.yaml", entries)
    return start(graph, goal, core or [], budget, seconds, ScriptedProposer.from_file(script),
                 tmp_path, default_workspace_root(), ulid=ulid)


def direct_leaf() -> list[dict]:
    return [s.identify("write a release*", "mentions the new flags"),
            s.resolve("write a release*", "The CSV tool now takes --file and --column."),
            s.judge("write a release*", "mentions the new flags", True, 0.9),
            s.leaf("write a release*", True)]


def test_a_direct_leaf_resolves(initialised_graph: GraphStore, tmp_path: Path) -> None:
    kernel, root = _start(initialised_graph, tmp_path, ESSAY, direct_leaf())
    outcome = solve(kernel, root)
    assert (outcome.status, outcome.sigma_system) == ("resolved", 0.9)
    entries = load_entries(initialised_graph, kernel.run.run_id)[2]
    ops = [e.operation for e in entries if e.kind == "proposal"]
    # one eligible constraint and one candidate tool: neither choice needed a model call
    assert ops == ["identify_constraints", "resolve", "verify_semantic", "classify_leaf"]
    # the history each step read is recorded before the proposal it fed
    assert [(e.kind, e.operation) for e in entries][:2] == [
        ("observation", "history/identify"), ("proposal", "identify_constraints")]
    assert [e.operation for e in entries if e.kind == "observation"] == [
        "history/identify", "history/route", "history/resolve"]


def plan_entries() -> list[dict]:
    part = "launch part*"
    return [
        s.identify("plan a product*", "covers every launch channel"),
        s.resolve("plan a product*", "Outline: announce, docs, support."),
        s.judge("plan a product*", "covers every launch channel", True, 0.9),
        s.leaf("plan a product*", False),
        s.decompose("plan a product*", [("docs", "launch part: write the docs", 1.0),
                                        ("announce", "launch part: announce it", 2.0),
                                        ("support", "launch part: brief support", 1.0)],
                    [("announce", "docs"), ("support", "announce"), ("docs", "support")]),
        s.identify(part, "is concrete"),
        s.resolve(part, "Done, concretely.", repeat=True),
        s.judge(part, "is concrete", True, 0.8, repeat=True),
        s.leaf(part, True, repeat=True),
        {**s.identify(part, "is concrete"), "repeat": True},
        s.consistent("plan a product*"),
        s.assemble("plan a product*", "Launch plan: docs, announcement, support brief."),
    ]


def test_decomposition_honours_dependencies(initialised_graph: GraphStore,
                                            tmp_path: Path) -> None:
    kernel, root = _start(initialised_graph, tmp_path, PLAN, plan_entries())
    outcome = solve(kernel, root)
    assert outcome.status == "resolved"
    children = kernel.deps.children(root)
    by_summary = {kernel.tree.get(c.id).summary: c for c in children}
    docs, announce, support = (by_summary[f"launch part: {x}"] for x in
                               ("write the docs", "announce it", "brief support"))
    # docs -> support would close a cycle: the kernel dropped that edge
    assert announce.depends_on == (docs.id,) and support.depends_on == (announce.id,)
    assert docs.depends_on == ()
    resolved = [e.goal_id for e in load_entries(initialised_graph, kernel.run.run_id)[2]
                if e.operation == "resolve" and e.goal_id != root]
    assert resolved == [docs.id, announce.id, support.id]
    assert outcome.sigma_system == pytest.approx(0.72)
    weights = [kernel.budget.ledger_totals(c.id)["cost_allocated"] for c in
               (docs, announce, support)]
    assert weights[1] == 2 * weights[0] == 2 * weights[2]
    # the boot query a later goal of this pattern reads at step 8
    past = kernel.history.decompositions(kernel.tree.get(root).pattern_id, "goal:later")
    assert [(d.goal_id, d.status) for d in past] == [(root, "resolved")]
    assert [(c.summary, c.after) for c in past[0].children] == [
        ("launch part: write the docs", []),
        ("launch part: announce it", ["launch part: write the docs"]),
        ("launch part: brief support", ["launch part: announce it"])]
    assert "launch part: announce it (after launch part: write the docs)" in \
        StepHistory(decompositions=past).block(PLAN, 3000)


def test_a_decomposition_keeps_the_children_an_earlier_kernel_made(
        initialised_graph: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel that committed a decomposition in parts may have died after making some
    children: the step keeps them and commits the rest as before, with the same result
    as the one-commit decomposition."""
    from kernel.solve.effects import NewChildren
    from kernel.solve.steps import children as step

    made: list[str] = []

    def half_made(view, goal, plan, round_: int, covered):  # type: ignore[no-untyped-def]
        key, spec = next(iter(step._specs(goal, plan, round_, {}, covered).values()))
        made.extend((yield NewChildren(goal, ((key, spec),),
                                       tuple(view.inherited_by_children(goal.id)))))
        return (yield from step._beside(view, view.goal(goal.id), plan, round_,
                                        {key: made[0]}, covered))

    monkeypatch.setattr(step, "_fresh", half_made)
    kernel, root = _start(initialised_graph, tmp_path, PLAN, plan_entries())
    assert solve(kernel, root).status == "resolved"
    children = kernel.deps.children(root)
    docs, announce, support = children
    assert docs.id == made[0]  # the child made before, kept
    assert kernel.tree.get(docs.id).summary == "launch part: write the docs"
    assert announce.depends_on == (docs.id,) and support.depends_on == (announce.id,)
    weights = [kernel.budget.ledger_totals(c.id)["cost_allocated"] for c in children]
    assert weights[1] == 2 * weights[0] == 2 * weights[2] > 0


def test_low_path_confidence_gates_and_backtracks(initialised_graph: GraphStore,
                                                  tmp_path: Path) -> None:
    part = "launch part*"
    entries = [
        s.identify("plan a product*", "covers every launch channel"),
        s.resolve("plan a product*", "A rough outline.", repeat=True),
        s.judge("plan a product*", "covers every launch channel", True, 0.7),
        s.judge("plan a product*", "covers every launch channel", True, 0.95, repeat=True),
        s.leaf("plan a product*", False, repeat=True),
        s.decompose("plan a product*", [("docs", "launch part: write the docs", 1.0)], []),
        s.decompose("plan a product*", [("docs", "launch part: write the final docs", 1.0)], []),
        {**s.identify(part, "is concrete"), "repeat": True},
        s.resolve(part, "Done.", repeat=True),
        s.judge("launch part: write the docs", "is concrete", True, 0.7),  # 0.7*0.7 < 0.5
        s.judge("launch part: write the final*", "is concrete", True, 0.9),
        s.leaf("launch part: write the docs", False),     # not a leaf: gated, not decomposed
        s.leaf("launch part: write the final*", True),
        s.assemble("plan a product*"),
    ]
    kernel, root = _start(initialised_graph, tmp_path, PLAN, entries)
    outcome = solve(kernel, root)
    assert outcome.status == "resolved"
    stale = [g for g in initialised_graph.run("goal/tree", {"run_id": kernel.run.run_id})
             if g["stale"]]
    assert len(stale) == 1 and stale[0]["status"] == "pending"  # the gated child, kept
    assert [a.sigma_v for a in kernel.attempts.of_goal(root)] == [0.7, 0.95]
    assert outcome.sigma_system == pytest.approx(0.95 * 0.9)


@pytest.mark.slow
def test_a_replay_reaches_the_same_summary_hash(initialised_graph: GraphStore, tmp_path: Path,
                                                data_dir: Path) -> None:
    kernel, root = _start(initialised_graph, tmp_path, PLAN, plan_entries())
    solve(kernel, root)
    settings = store_settings(initialised_graph, data_dir)
    result = replay(settings, kernel.run.run_id)
    assert result.divergence is None and result.identical
    assert result.replay_hash == summary_hash(initialised_graph, kernel.run.run_id)


@pytest.mark.parametrize(("limit", "status"), [(5, "resolved"), (0.01, "infeasible")])
def test_an_arithmetic_core_constraint_is_decided_by_z3(
        initialised_graph: GraphStore, tmp_path: Path, limit: float, status: str) -> None:
    cap = ConstraintSpec(type="logic", domain="cost", title=f"cost_usd <= {limit}",
                         payload={"check": "arith", "expr": f"cost_usd <= {limit}"},
                         provenance=Provenance(source="human"))
    entries = [*direct_leaf(),
               {"operation": "select_constraints", "goal": "write a release*", "output": {
                   "rationale": "both matter",
                   "constraint_ids": ["mentions the new flags", f"cost_usd <= {limit}"]}},
               {**s.judge("write a release*", "mentions the new flags", True, 0.9),
                "repeat": True},
               s.feedback("write a release*")]
    kernel, root = _start(initialised_graph, tmp_path, ESSAY, entries, core=[cap])
    outcome = solve(kernel, root)
    assert outcome.status == status
    check = next(c for c in kernel.attempts.of_goal(root)[0].verification.checks
                 if c.constraint_id == cap.with_id().id)
    assert check.sigma_i == 1.0 and check.detail["facts"] == {"cost_usd": 0.06}
    assert check.passed is (status == "resolved")
    if not check.passed:
        assert check.detail["violated_by"] == {"cost_usd": 0.06}


@pytest.mark.slow
def test_backtracking_has_a_budget(initialised_graph: GraphStore, tmp_path: Path) -> None:
    part = "launch part*"
    entries = [
        s.identify("plan a product*", "covers every launch channel"),
        s.resolve("plan a product*", "A rough outline.", repeat=True),
        s.judge("plan a product*", "covers every launch channel", True, 0.7, repeat=True),
        s.leaf("plan a product*", False, repeat=True),
        {**s.decompose("plan a product*", [("docs", "launch part: write the docs", 1.0)], []),
         "repeat": True},
        {**s.identify(part, "is concrete"), "repeat": True},
        s.resolve(part, "Done.", repeat=True),
        s.judge(part, "is concrete", True, 0.7, repeat=True),  # always 0.49 on the path
        s.leaf(part, False, repeat=True),
    ]
    kernel, root = _start(initialised_graph, tmp_path, PLAN, entries, budget=100.0,
                          seconds=100_000)
    outcome = solve(kernel, root)
    assert outcome.status == "infeasible"
    refusals = [e.data() for e in load_entries(initialised_graph, kernel.run.run_id)[2]
                if e.kind == "refusal"]
    assert refusals[0]["reasons"] == ["CONTRADICTION_BUDGET_EXCEEDED"]
    assert "after 3 reopenings" in refusals[0]["detail"]
    assert kernel.tree.get(root).reopened == 3


@pytest.mark.slow
def test_a_child_can_ask_its_parent_to_rescope(initialised_graph: GraphStore,
                                               tmp_path: Path) -> None:
    entries = [
        s.identify("plan a product*", "covers every launch channel"),
        s.resolve("plan a product*", "Outline.", repeat=True),
        s.judge("plan a product*", "covers every launch channel", True, 0.9, repeat=True),
        s.leaf("plan a product*", False, repeat=True),
        s.decompose("plan a product*", [("all", "launch part: do everything at once", 1.0)],
                    []),
        s.decompose("plan a product*", [("docs", "launch part: write the docs", 1.0)], []),
        {**s.identify("launch part*", "is concrete"), "repeat": True},
        s.resolve("launch part*", "Too much to do.", repeat=True),
        s.judge("launch part: do everything*", "is concrete", False, 0.2),
        {"operation": "generate_feedback", "goal": "launch part: do everything*", "output": {
            "summary": "this part is the whole launch", "failure_mode": "too_broad",
            "rescope": True}},
        s.judge("launch part: write the docs", "is concrete", True, 0.9),
        s.leaf("launch part*", True, repeat=True),
        s.assemble("plan a product*"),
    ]
    kernel, root = _start(initialised_graph, tmp_path, PLAN, entries)
    outcome = solve(kernel, root)
    assert outcome.status == "resolved"
    goal = kernel.tree.get(root)
    assert goal.reopened == 1 and goal.decompositions == 2
    tree = initialised_graph.run("goal/tree", {"run_id": kernel.run.run_id})
    assert [g["summary"] for g in tree if g["stale"]] == ["launch part: do everything at once"]


class _Overestimating(ScriptedProposer):
    """Estimates well above what each call costs, as a live model's are: parts then draw
    grants from their parent that the costs alone would not explain."""

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
        cost = super().estimate(request, occurrence)
        return Estimate(cost_usd=cost.cost_usd * 10, seconds=cost.seconds)


@pytest.mark.slow
def test_a_replay_draws_the_grants_the_recorded_estimates_drew(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    script = s.write(tmp_path / "script.yaml", plan_entries())
    proposer = _Overestimating(ScriptedProposer.from_file(script).script)
    kernel, root = start(initialised_graph, PLAN, [], 2.0, 600, proposer, tmp_path,
                         default_workspace_root())
    solve(kernel, root)  # it may park on a person for budget: what matters is the same
    events = initialised_graph.run("summary/budget", {"run_id": kernel.run.run_id})
    allocations = Counter(e["goal_id"] for e in events if e["kind"] == "allocate"
                          and e["source_id"])
    assert max(allocations.values()) > 1  # a share, then a grant drawn by a pre-check
    result = replay(store_settings(initialised_graph, data_dir), kernel.run.run_id)
    assert result.divergence is None and result.identical, result
