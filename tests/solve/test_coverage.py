"""Coverage of inherited constraints: a decomposition says which part answers for each of
the goal's constraints (or that the whole does); the kernel refuses one that leaves a
logic constraint unanswered or gives one twice, each part is verified against what it
answers for, and its prompts show that and what it may rely on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.ledger import load_entries
from kernel.protocol import Resolution, ResolveRequest
from kernel.protocol.coverage import coverage, left_to_the_whole
from kernel.protocol.solve_models import Decomposition
from kernel.solve.dispatch import solve
from kernel.store.base import GraphStore
from resolvers.claude.adapter import render_prompt
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import ScriptedProposer
from tests.sandbox_support import needs_sandbox
from tests.solve import scripts as s
from tests.starting import start

BUDGET = ConstraintSpec(type="logic", domain="cost", title="costs at most $5",
                        payload={"check": "arith", "expr": "cost_usd <= 5"},
                        provenance=Provenance(source="human"))
TONE = ConstraintSpec(type="semantic", domain="quality", title="plain words",
                      payload={"rubric": "no jargon"}, provenance=Provenance(source="human"))
GOAL = "Write the field guide"


def _child(key: str, *answers: str) -> dict[str, Any]:
    return {"key": key, "goal_description": f"part {key}", "goal_summary": f"part {key}",
            "relative_complexity": 1, "answers_for": list(answers)}


def _plan(children: list[dict[str, Any]], whole: list[str] | None = None) -> Decomposition:
    return Decomposition.model_validate({"children": children, "rationale": "parts",
                                         "assembly_answers_for": whole or []})


def test_every_logic_constraint_is_answered_for_exactly_once() -> None:
    budget, tone = BUDGET.with_id(), TONE.with_id()
    fine = coverage([budget, tone], _plan([_child("a", budget.title), _child("b", tone.id)]))
    assert fine.problems == [] and fine.owed_by("a") == [budget.id]
    assert fine.owed_by("b") == [tone.id]
    assert coverage([budget, tone], _plan([_child("a")], [budget.id])).problems == []
    left = coverage([budget, tone], _plan([_child("a"), _child("b")]))
    assert left.problems == [f"nothing answers for {budget.id} ('costs at most $5'): name it "
                             "in one part's answers_for, or in assembly_answers_for"]
    twice = coverage([budget], _plan([_child("a", budget.id), _child("b")], [budget.title]))
    assert twice.problems == [f"{budget.id} ('costs at most $5') is answered for more than "
                              "once (by a, assembly): give it to one part or to the assembly"]
    stray = coverage([budget], _plan([_child("a", "fast"), _child("b")], [budget.id]))
    assert stray.problems == ["part 'a''s answers_for names 'fast', which is none of the "
                              "goal's constraints (name one by its id or exact title)"]


def test_a_scripted_decomposition_without_the_mapping_leaves_the_logic_ones_to_the_whole(
        ) -> None:
    budget, tone = BUDGET.with_id(), TONE.with_id()
    output = {"children": [_child("a")], "rationale": "one part"}
    assert left_to_the_whole([budget, tone], output)["assembly_answers_for"] == [budget.id]
    mapped = {**output, "children": [_child("a", budget.title)]}
    assert left_to_the_whole([budget, tone], mapped) == mapped


class _Recording(ScriptedProposer):
    requests: list[ResolveRequest]

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        self.requests.append(request)
        return super().propose(request, occurrence)


def _three_levels(tmp_path: Path, root_plan: dict[str, Any]) -> _Recording:
    """Root -> (middle, side); middle -> (deep, shallow). Every goal resolves with text."""
    middle = {**s.decompose("part middle", [("deep", "part deep", 1), ("shallow",
                                                                      "part shallow", 1)], []),
              "goal": "part middle"}
    middle["output"]["children"][0]["answers_for"] = [BUDGET.title]
    script = s.write(tmp_path / "script.yaml", [
        {"operation": "decompose", "goal": GOAL, "output": root_plan},
        middle, s.consistent(GOAL), s.assemble(GOAL),
        s.judge("*", TONE.title, True, 0.9, repeat=True),
    ], fallback={
        "identify_constraints": {"output": {"constraints": []}},
        "select_constraints": {"output": {"constraint_ids": [BUDGET.title, TONE.title],
                                          "rationale": "both"}},
        "resolve": {"output": {"artifact_type": "doc", "format": "markdown",
                               "content": "a page"}},
        "classify_leaf": {"output": {"is_leaf": True, "leaf_kind": "atomic",
                                     "leaf_reason": "small"}},
    })
    script.write_text(script.read_text().replace(
        "proposals:\n", "proposals:\n- {operation: classify_leaf, goal: '" + GOAL + "', output: "
        "{is_leaf: false, leaf_kind: null, leaf_reason: parts}}\n- {operation: classify_leaf, "
        "goal: part middle, output: {is_leaf: false, leaf_kind: null, leaf_reason: parts}}\n", 1))
    proposer = _Recording.from_file(script)
    assert isinstance(proposer, _Recording)
    proposer.requests = []
    return proposer


def _first(requests: list[ResolveRequest], operation: str, summary: str) -> ResolveRequest:
    return next(r for r in requests if r.operation == operation
                and r.payload.get("goal_summary") == summary)


def test_a_middle_layer_answers_for_what_it_was_given_and_hands_it_down(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    """The root gives its budget to the middle part, which is verified against it, shows
    it where it said "(none)" before, and gives it on to one of its own parts; the other
    part is shown it as relied on, with who answers for it."""
    root_plan = {"rationale": "two parts", "children": [
        _child("middle", BUDGET.title), _child("side")], "dependencies": []}
    proposer = _three_levels(tmp_path, root_plan)
    kernel, root = start(initialised_graph, GOAL, [BUDGET, TONE], 3.0, 3600, proposer,
                         tmp_path, default_workspace_root())
    outcome = solve(kernel, root)
    assert outcome.status == "resolved", [e.data() for e in load_entries(
        initialised_graph, kernel.run.run_id)[2] if e.kind == "refusal"]
    budget = BUDGET.with_id()
    decompose = _first(proposer.requests, "decompose", "part middle")
    assert [c.id for c in decompose.constraints] == [budget.id]
    prompt = render_prompt(decompose)
    constraints = prompt.split("Constraints (")[1].split("Inherited from")[0]
    assert budget.id in constraints and "(none)" not in constraints
    assert "\nanswers_for:" in prompt.split("Inherited from")[1].split("Output so far")[0]
    deep = render_prompt(_first(proposer.requests, "resolve", "part deep"))
    assert "cost_usd <= 5 (decided exactly over the metrics)" in deep.split("\nanswers_for:")[1]
    assert "from: part middle" in deep
    shallow = render_prompt(_first(proposer.requests, "resolve", "part shallow"))
    relied = shallow.split("\nrelies_on:")[1]
    assert budget.id in relied and "another part: part deep" in relied
    assert "a goal further up the tree" in relied  # the root's tone, answered above
    side = render_prompt(_first(proposer.requests, "classify_leaf", "part side"))
    assert "\nanswers_for:" not in side and "another part: part middle" in side
    goals = {g.summary: g.id for g in (kernel.tree.get(c.id) for c in
                                       kernel.deps.children(root))}
    for summary, owed in (("part middle", [budget.id]), ("part side", [])):
        roles = kernel.constraints.roles(goals[summary])
        assert roles["owed"] == owed and set(owed) <= set(roles["selected"])
    middle_children = [kernel.tree.get(c.id) for c in kernel.deps.children(goals["part middle"])]
    assert {g.summary: kernel.constraints.roles(g.id)["owed"] for g in middle_children} == {
        "part deep": [budget.id], "part shallow": []}


def test_a_decomposition_that_gives_a_constraint_to_two_parts_is_refused_by_name(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    root_plan = {"rationale": "two parts", "children": [
        _child("middle", BUDGET.title), _child("side", BUDGET.title)], "dependencies": []}
    proposer = _three_levels(tmp_path, root_plan)
    kernel, root = start(initialised_graph, GOAL, [BUDGET, TONE], 3.0, 3600, proposer,
                         tmp_path, default_workspace_root())
    outcome = solve(kernel, root)
    assert outcome.status != "resolved"
    assert kernel.deps.children(root) == []  # no child was made, none ran
    entries = load_entries(initialised_graph, kernel.run.run_id)[2]
    said = " ".join(str(e.data()) for e in entries if e.kind == "refusal")
    assert "is answered for more than once (by middle, side)" in said, said
    assert BUDGET.with_id().id in said


COUNT = "def count_words(text):\n    return len(text.split())\n"
COUNT_TEST = "from main import count_words\n\n\ndef test_counts():\n    assert count_words('a  b') == 2\n"


def _middle_left_to_the_whole(tmp_path: Path, assembly: dict[str, Any]) -> ScriptedProposer:
    """Root -> (middle, side); the middle layer has a test constraint of its own, and its
    decomposition leaves it to the whole: only the assembly can meet it."""
    not_leaf = {"is_leaf": False, "leaf_kind": None, "leaf_reason": "parts"}
    code = {"artifact_type": "code", "format": "python", "content": "VALUE = 1\n"}
    middle = s.decompose("part middle", [("deep", "part deep", 1),
                                         ("shallow", "part shallow", 1)], [])
    middle["output"]["assembly_answers_for"] = ["counts words"]
    script = s.write(tmp_path / "script.yaml", [
        {"operation": "identify_constraints", "goal": "part middle", "output": {
            "constraints": [{"type": "logic", "domain": "software", "title": "counts words",
                             "explicit": True, "payload": {"check": "test",
                                                           "tests": ["test_counts"]}}]}},
        {"operation": "resolve", "goal": "part middle", "output": {
            **code, "content": COUNT, "tests": {"test_main.py": COUNT_TEST}}},
        {"operation": "classify_leaf", "goal": GOAL, "output": not_leaf},
        {"operation": "classify_leaf", "goal": "part middle", "output": not_leaf},
        {"operation": "decompose", "goal": GOAL, "output": {
            "rationale": "two parts", "children": [_child("middle"), _child("side")]}},
        middle, s.consistent(GOAL),
        {"operation": "assemble", "goal": GOAL, "repeat": True, "output": assembly},
    ], fallback={
        "identify_constraints": {"output": {"constraints": []}},
        "resolve": {"output": code},
        "classify_leaf": {"output": {"is_leaf": True, "leaf_kind": "atomic",
                                     "leaf_reason": "small"}},
    })
    return ScriptedProposer.from_file(script)


@needs_sandbox
def test_a_middle_layer_s_test_left_to_the_whole_is_run_on_the_assembled_deliverable(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    bare = _middle_left_to_the_whole(tmp_path, {"content": "VALUE = 1\n", "format": "python"})
    kernel, root = start(initialised_graph, GOAL, [], 3.0, 3600, bare, tmp_path,
                         default_workspace_root())
    outcome = solve(kernel, root)
    assert outcome.status == "infeasible", outcome
    entries = load_entries(initialised_graph, kernel.run.run_id)[2]
    refusal = [e.data() for e in entries if e.kind == "refusal"][-1]
    assert refusal["reasons"] == ["ASSEMBLY_VIOLATES_CONSTRAINTS"]
    assert "test_counts" in refusal["detail"] and "MISSING" in refusal["detail"]


@needs_sandbox
def test_an_assembly_that_meets_a_middle_layer_s_test_resolves(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    whole = _middle_left_to_the_whole(tmp_path, {
        "content": "VALUE = 1\n\n\n" + COUNT, "format": "python",
        "tests": {"test_whole.py": COUNT_TEST}})
    kernel, root = start(initialised_graph, GOAL, [], 3.0, 3600, whole, tmp_path,
                         default_workspace_root())
    assert solve(kernel, root).status == "resolved"
