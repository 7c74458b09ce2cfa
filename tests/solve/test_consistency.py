"""Global consistency (step 12) and assembly (step 13), end to end on the embedded store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernel.core.ledger import load_entries
from kernel.protocol.solve_models import ResolutionOutput
from kernel.repositories import knowledge
from kernel.solve.dispatch import solve
from kernel.solve.steps.consistency import coupled_pairs
from kernel.store import GraphStore
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import load_script
from tests.solve import scripts as s
from tests.solve.test_composite import Recording
from tests.starting import start

ROOT = "plan a product*"
PART = "launch part*"
SHARED = "dates use one format"  # decided by Z3 over the metric each part reports
JUDGED = "reads well"
COUPLING = "every date is written as ISO 8601"


def _judge(goal: str, sigmas: dict[str, float], repeat: bool = False) -> dict:
    return {"operation": "verify_semantic", "goal": goal, "repeat": repeat, "output": {
        "checks": [{"constraint_id": t, "passed": True, "sigma": v, "rubric_trace": "ok"}
                   for t, v in sigmas.items()]}}


def _entries(conflict: bool, coupling: bool = True) -> list[dict]:
    review = {"operation": "check_global_consistency", "goal": ROOT, "output": {
        "verdict": "UNSAT", "conflicts": [{
            "nodes_involved": ["launch part: write the docs", "launch part: announce it"],
            "description": "the docs say 03/04, the announcement says 4 March",
            "coupling_constraints": [{"type": "semantic", "domain": "consistency",
                                      "title": COUPLING, "explicit": False}]
            if coupling else []}]}}
    part_identify = {"operation": "identify_constraints", "goal": PART, "repeat": True,
                     "output": {"required_capabilities": ["generate_code"], "constraints": [
                         {"type": "logic", "domain": "interface", "title": SHARED,
                          "explicit": False,
                          "payload": {"check": "arith", "expr": "date_formats == 1"}},
                         {"type": "semantic", "domain": "quality", "title": JUDGED,
                          "explicit": False}]}}
    return [
        s.identify(ROOT, "covers every launch channel"),
        s.resolve(ROOT, "Outline: docs, then the announcement.", repeat=True),
        _judge(ROOT, {"covers every launch channel": 0.9}),
        _judge(ROOT, {"covers every launch channel": 0.9, COUPLING: 0.95}),
        s.leaf(ROOT, False, repeat=True),
        {"operation": "select_constraints", "goal": ROOT, "output": {
            "rationale": "the coupling constraint binds both parts",
            "constraint_ids": ["covers every launch channel", COUPLING]}},
        {**s.decompose(ROOT, [("docs", "launch part: write the docs", 1.0),
                              ("announce", "launch part: announce it", 1.0)],
                       [("announce", "docs")]), "repeat": True},
        part_identify,
        {"operation": "select_constraints", "goal": PART, "repeat": True, "output": {
            "constraint_ids": [SHARED, JUDGED], "rationale": "the interface and the text"}},
        {**s.resolve(PART, "Launch on 03/04.", repeat=True)} | {"output": {
            **s.resolve(PART, "Launch on 03/04.")["output"], "metrics": {"date_formats": 1}}},
        # after a conflict the parts hold its coupling constraint as their own, and are
        # judged on it (a judgment of a constraint a part does not hold is left out)
        _judge("launch part: write the docs", {JUDGED: 0.8, COUPLING: 0.9}, repeat=True),
        _judge("launch part: announce it", {JUDGED: 0.75, COUPLING: 0.9}, repeat=True),
        s.leaf(PART, True, repeat=True),
        *([review] if conflict else []),
        s.consistent(ROOT),
        s.assemble(ROOT, "Docs and announcement, dated 2027-03-04."),
    ]


def _run(graph: GraphStore, tmp_path: Path, conflict: bool, coupling: bool = True):
    kernel, root, outcome, _ = _run_recorded(graph, tmp_path, conflict, coupling)
    return kernel, root, outcome


def _run_recorded(graph: GraphStore, tmp_path: Path, conflict: bool, coupling: bool = True):
    """``_run``, and what each decomposition was asked."""
    script = s.write(tmp_path / "launch.yaml", _entries(conflict, coupling))
    proposer = Recording(load_script(script))
    proposer.asked = []
    kernel, root = start(graph, "Plan a product launch", [], 5.0, 600,
                         proposer, tmp_path, default_workspace_root())
    return kernel, root, solve(kernel, root), proposer.asked


def test_a_global_conflict_reopens_the_lowest_common_ancestor(initialised_graph: GraphStore,
                                                              tmp_path: Path) -> None:
    kernel, root, outcome, asked = _run_recorded(initialised_graph, tmp_path, conflict=True)
    assert outcome.status == "resolved"
    goal = kernel.tree.get(root)
    assert goal.reopened == 1 and goal.decompositions == 2
    roles = kernel.constraints.roles(root)
    coupling = kernel.constraints.get_many(roles["coupling"])
    assert [c.title for c in coupling] == [COUPLING]
    assert set(roles["coupling"]) <= set(roles["selected"])
    tree = initialised_graph.run("goal/tree", {"run_id": kernel.run.run_id})
    stale = [g for g in tree if g["stale"]]
    assert len(stale) == 2  # the first decomposition, invalidated, not deleted
    for old in stale:
        assert kernel.attempts.of_goal(old["id"])  # its history kept
    ops = [e.operation for e in load_entries(initialised_graph, kernel.run.run_id)[2]]
    assert ops.count("check_global_consistency") == 2 and ops[-1] == "assemble"
    # the next split is told why, and its parts hold the coupling constraint themselves
    first_split, second_split = asked
    assert "feedback" not in first_split
    reason = second_split["feedback"]
    assert reason["conflict"]["between"] == ["launch part: announce it",
                                             "launch part: write the docs"]
    assert [e["output"] for e in reason["conflict"]["evidence"]] == ["Launch on 03/04."] * 2
    assert reason["coupling_goes_to"] == ["announce", "docs"]
    for part in kernel.deps.children(root):
        assert kernel.constraints.roles(part.id)["coupling"] == roles["coupling"]
        assert set(roles["coupling"]) <= set(kernel.constraints.roles(part.id)["selected"])


def test_assembly_has_full_lineage_and_sigma_system(initialised_graph: GraphStore,
                                                    tmp_path: Path) -> None:
    kernel, root, outcome = _run(initialised_graph, tmp_path, conflict=False)
    assert outcome.status == "resolved"
    # sigma_system = min over leaves of the product down the path: 0.9 * min(0.8, 0.75)
    assert outcome.sigma_system == pytest.approx(0.675)
    goal = kernel.tree.get(root)
    final = kernel.artifacts.get(goal.final_artifact_id)
    leaves = [c.id for c in kernel.deps.children(root)]
    outputs = sorted(kernel.tree.get(c).output_artifact_id for c in leaves)
    assert sorted(final.lineage.input_artifact_ids) == outputs
    assert final.metadata["sigma_system"] == outcome.sigma_system == goal.sigma_system
    assert ResolutionOutput.model_validate_json(kernel.artifacts.read(final.id)).content == \
        "Docs and announcement, dated 2027-03-04."
    # the two parts are coupled twice over: a dependency and a shared logic constraint
    pairs = coupled_pairs(knowledge.couplings(kernel.store, root))
    assert len(pairs) == 1 and pairs[0]["kinds"] == ["constraint", "dependency"]
    assert pairs[0]["via"] == [SHARED]
    review = next(e for e in load_entries(initialised_graph, kernel.run.run_id)[2]
                  if e.operation == "check_global_consistency")
    assert json.loads(json.dumps(review.data()["request"]))["operation"] == \
        "check_global_consistency"



def test_an_unsat_review_without_a_coupling_constraint_is_logged_as_unsat(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    """Nothing to act on, so the tree goes on to assembly; the log still says what the
    review said."""
    kernel, _, outcome = _run(initialised_graph, tmp_path, conflict=True, coupling=False)
    assert outcome.status == "resolved", outcome
    reviews = [e["summary"] for e in kernel.log.entries(2)
               if e["summary"].startswith("global_consistency")]
    assert reviews == ["global_consistency: UNSAT"]
