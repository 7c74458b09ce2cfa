"""A decomposed goal's arithmetic constraints, decided over its parts when they resolve."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernel.core.envelopes import ConstraintSpec, ConstraintType, Provenance
from kernel.core.ledger import load_entries
from kernel.protocol import Resolution, ResolveRequest
from kernel.refusal import RefusalReason
from kernel.runtime.kernel import SolveConfig
from kernel.solve.dispatch import solve
from kernel.solve.session import replay
from kernel.solve.verification import part_facts
from kernel.store import GraphStore
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import ScriptedProposer, load_script
from tests.conftest import store_env, store_settings
from tests.solve import scripts as s
from tests.starting import start

PIPELINE = "Design a three-stage ingest pipeline"
ROOT = "design a three-stage*"
LATENCY = ConstraintSpec(type=ConstraintType.LOGIC, domain="performance",
                         title="sum_latency_ms <= 500",
                         payload={"check": "arith", "expr": "sum_latency_ms <= 500"},
                         provenance=Provenance(source="human"))
SPEND = ConstraintSpec(type=ConstraintType.LOGIC, domain="cost", title="cost_usd <= 2",
                       payload={"check": "arith", "expr": "cost_usd <= 2"},
                       provenance=Provenance(source="human"))


def _measured(goal: str, content: str, metrics: dict[str, float]) -> dict[str, Any]:
    return {"operation": "resolve", "goal": goal, "cost_usd": 0.05, "seconds": 10,
            "output": {"artifact_type": "doc", "format": "markdown", "content": content,
                       "metrics": metrics}}


def _stages(prefix: str, latencies: dict[str, float]) -> list[dict[str, Any]]:
    glob = f"{prefix}: *"
    entries: list[dict[str, Any]] = [{**s.identify(glob, "is concrete"), "repeat": True}]
    entries += [_measured(f"{prefix}: {name}*", f"{name}, done.", {"latency_ms": ms})
                for name, ms in latencies.items()]
    return [*entries, s.judge(glob, "is concrete", True, 0.9, repeat=True),
            s.leaf(glob, True, repeat=True)]


def _decompose(prefix: str, names: list[str]) -> dict[str, Any]:
    return s.decompose(ROOT, [(n, f"{prefix}: {n}", 1.0) for n in names], [])


def pipeline_entries(second_round: bool = True) -> list[dict[str, Any]]:
    names = ["extract", "transform", "load"]
    entries = [
        {"operation": "identify_constraints", "goal": ROOT, "repeat": True,
         "output": {"required_capabilities": ["generate_code"], "constraints": []}},
        {"operation": "select_constraints", "goal": ROOT, "repeat": True,
         "output": {"rationale": "both bound the whole",
                    "constraint_ids": [LATENCY.title, SPEND.title]}},
        # the plan's own estimate passes; the measured parts decide
        _measured(ROOT, "Stages: extract, transform, load.", {"latency_ms": 450}),
        _measured(ROOT, "Stages again, with a streaming transform.", {"latency_ms": 450}),
        s.leaf(ROOT, False, repeat=True),
        _decompose("stage", names),
        *_stages("stage", {"extract": 200, "transform": 150, "load": 250}),
        {**s.consistent(ROOT), "repeat": True},
        s.assemble(ROOT, "Pipeline: fast extract, streaming transform, bulk load."),
    ]
    if second_round:
        entries[6:6] = [_decompose("fast stage", names),
                        *_stages("fast stage", {"extract": 100, "transform": 150,
                                                "load": 200})]
    return entries


class Recording(ScriptedProposer):
    """The script, remembering what each decomposition was asked."""

    asked: list[dict[str, Any]]

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        if request.operation == "decompose":
            feedback = {"feedback": request.feedback} if request.feedback else {}
            self.asked.append({**request.payload, **feedback})
        return super().propose(request, occurrence)


def _start(graph: GraphStore, tmp_path: Path, entries: list[dict],
           config: SolveConfig | None = None) -> tuple[Any, str, Recording]:
    script = s.write(tmp_path / "pipeline.yaml", entries)
    proposer = Recording(load_script(script))
    proposer.asked = []
    kernel, root = start(graph, PIPELINE, [LATENCY, SPEND], 5.0, 600, proposer, tmp_path,
                         default_workspace_root(), config=config)
    return kernel, root, proposer


def _decisions(kernel: Any, name: str) -> list[dict[str, Any]]:
    rows = kernel.log.entries()
    details = [json.loads(r["detail"]) if isinstance(r["detail"], str) else r["detail"]
               for r in rows if r["category"] == "decision"]
    return [d for d in details if d["decision"] == name]


@pytest.mark.slow
def test_parts_that_together_break_a_total_reopen_the_goal(initialised_graph: GraphStore,
                                                            tmp_path: Path,
                                                            data_dir: Path) -> None:
    kernel, root, proposer = _start(initialised_graph, tmp_path, pipeline_entries())
    outcome = solve(kernel, root)
    assert outcome.status == "resolved"
    first, second = _decisions(kernel, "composite_check")
    assert (first["chosen"], second["chosen"]) == ("UNSAT", "SAT")
    latency = next(c for c in first["checks"] if not c["passed"])
    assert latency["detail"]["facts"]["sum_latency_ms"] == 600
    assert latency["repair_suggestion"]["violated_by"] == {"sum_latency_ms": 600}
    spend = next(c for c in second["checks"] if c["detail"]["expression"] == "cost_usd <= 2")
    # the whole subtree's spend, the superseded first round included; only the assembly
    # ($0.02) comes after the check
    spent = sum(int(g["cost_spent"] or 0) for g in
                initialised_graph.run("goal/tree", {"run_id": kernel.run.run_id}))
    assert spend["passed"] and spend["detail"]["facts"]["cost_usd"] == (spent - 20_000) / 1e6
    assert spent == 580_000  # 2 root resolves, 2 decompositions, 6 parts, assembly
    goals = initialised_graph.run("goal/tree", {"run_id": kernel.run.run_id})
    stale = sorted(g["summary"] for g in goals if g["stale"])
    assert stale == ["stage: extract", "stage: load", "stage: transform"]
    live = sorted(g["summary"] for g in goals if not g["stale"] and g["id"] != root)
    assert live == ["fast stage: extract", "fast stage: load", "fast stage: transform"]
    # the second decomposition was asked with the violation that reopened the goal
    first_ask, second_ask = proposer.asked
    assert "feedback" not in first_ask
    assert second_ask["feedback"]["violations"][0]["detail"]["facts"] == {"sum_latency_ms": 600}
    # what the stages had not spent went back to the goal as each resolved (the
    # superseded ones too, before the reopening), by ledger events the caches agree
    # with, and the second round was allocated from it
    budget = kernel.budget
    old = [g["id"] for g in goals if g["stale"]]
    new = [g["id"] for g in goals if not g["stale"] and g["id"] != root]
    given = budget.ledger_totals(old[0])["cost_allocated"]
    assert all(budget.remaining(g).cost == 0 for g in old)
    totals = budget.ledger_totals(root)
    assert totals["cost_refunded"] == totals["cache_cost_refunded"] == sum(
        budget.ledger_totals(g)["cost_allocated"] - budget.ledger_totals(g)["cost_spent"]
        for g in old + new)
    for goal_id in [root, *old, *new]:
        row = budget.ledger_totals(goal_id)
        assert all(row[key] == row[f"cache_{key}"] for key in row if not key.startswith("cache_"))
    assert budget.ledger_totals(new[0])["cost_allocated"] > 0.9 * given
    # the reopening is part of the committed state: a replay reaches it again
    settings = store_settings(initialised_graph, data_dir)
    result = replay(settings, kernel.run.run_id)
    assert result.divergence is None and result.identical


def test_past_the_contradiction_budget_the_goal_is_refused(initialised_graph: GraphStore,
                                                          tmp_path: Path) -> None:
    kernel, root, _ = _start(initialised_graph, tmp_path,
                             pipeline_entries(second_round=False), SolveConfig(max_reopens=0))
    outcome = solve(kernel, root)
    assert outcome.status == "infeasible"
    refusal = next(e.data() for e in load_entries(initialised_graph, kernel.run.run_id)[2]
                   if e.kind == "refusal")
    assert refusal["reasons"] == [RefusalReason.PARTS_VIOLATE_CONSTRAINT]
    assert "sum_latency_ms <= 500" in refusal["to_proceed"][0]


def test_a_metric_one_part_leaves_out_has_no_total() -> None:
    facts = part_facts([{"latency_ms": 1.0, "rows": 5.0}, {"latency_ms": 2.0}])
    assert facts == {"parts": 2, "sum_latency_ms": 3.0, "max_latency_ms": 2.0,
                     "min_latency_ms": 1.0}
    assert part_facts([]) == {"parts": 0}


@given(st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1,
                max_size=30))
def test_part_totals_match_an_independent_computation(values: list[float]) -> None:
    facts = part_facts([{"m": v} for v in values])
    assert facts["sum_m"] == pytest.approx(math.fsum(values))
    assert (facts["max_m"], facts["min_m"], facts["parts"]) == (max(values), min(values),
                                                                len(values))


@pytest.mark.slow
def test_the_shipped_pipeline_example_runs_from_the_cli(initialised_graph: GraphStore,
                                                        data_dir: Path) -> None:
    from typer.testing import CliRunner

    from kernel.cli.app import app

    env = store_env(initialised_graph, data_dir)
    script = Path(__file__).parents[2] / "seeds" / "examples" / "ingest-pipeline.script.yaml"
    result = CliRunner().invoke(app, [
        "solve", "Design a three-stage ingest pipeline for the nightly orders export",
        "-c", "logic:latency:sum_latency_ms <= 500", "-c", "logic:cost:cost_usd <= 2",
        "--proposer", "scripted", "--script", str(script), "--json"], env=env)
    assert result.exit_code == 0, result.output
    outcome = json.loads(result.stdout)  # stdout alone: progress lines go to stderr
    # the root's latency is the parts' reported figure, a claim (0.9), over parts judged 0.9
    assert (outcome["status"], outcome["sigma_system"]) == ("resolved", 0.81)
    goals = initialised_graph.run("goal/tree", {"run_id": outcome["run"]})
    assert sorted(g["summary"] for g in goals if g["stale"]) == [
        "stage: extract", "stage: load", "stage: transform"]
    status = CliRunner().invoke(app, ["status", outcome["run"], "--json"], env=env)
    assert json.loads(status.output)["goals"] == {"resolved": 4, "stale": 3}
