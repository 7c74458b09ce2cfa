"""A tool plan of several steps runs every step in order, each output handed to the next;
codex-tools-0, which writes no output of its own, is never offered to resolve a goal."""

from __future__ import annotations

from pathlib import Path

from kernel.core.registry import Registry, ResolverSpec
from kernel.protocol import Resolution, ResolveRequest
from kernel.solve.dispatch import solve
from kernel.store import GraphStore
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import ScriptedProposer
from tests.solve import scripts as s
from tests.starting import start

GOAL = "Write a release note for the CSV tool"
OUTLINER = "resolver:outliner-0"


class _Recording(ScriptedProposer):
    asked: list[ResolveRequest]

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        self.asked.append(request)
        return super().propose(request, occurrence)


def two_step_script(graph: GraphStore, tmp_path: Path) -> Path:
    """A second model-backed tool registered, and a script ranking a plan of two steps."""
    Registry(graph).register(ResolverSpec(
        id=OUTLINER, label="outliner", capabilities=["generate_code"]))
    return s.write(tmp_path / "script.yaml", [
        s.identify("write a release*"),
        {"operation": "rank_resolvers", "goal": "write a release*", "output": {
            "rationale": "outline, then write", "steps": [
                {"resolver_id": OUTLINER, "capability": "generate_code"},
                {"resolver_id": "resolver:claude-code-0", "capability": "generate_code"}]}},
        s.resolve("write a release*", "1. flags 2. examples"),
        s.resolve("write a release*", "The tool takes --file and --column."),
        s.leaf("write a release*", True),
    ])


def test_a_two_step_plan_hands_the_first_step_s_output_to_the_second(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    proposer = _Recording(ScriptedProposer.from_file(
        two_step_script(initialised_graph, tmp_path)).script)
    proposer.asked = []
    kernel, root = start(initialised_graph, GOAL, [], 2.0, 600, proposer, tmp_path,
                         default_workspace_root())
    assert solve(kernel, root).status == "resolved"
    first, second = [r for r in proposer.asked if r.operation == "resolve"]
    assert first.payload["inputs"] == []
    handed = second.payload["inputs"]
    assert [(i["from_step"], i["resolver_id"]) for i in handed] == [(1, OUTLINER)]
    assert handed[0]["output"]["content"] == "1. flags 2. examples"
    spends = [e for e in initialised_graph.run("summary/budget", {"run_id": kernel.run.run_id})
              if e["operation"] == "resolve"]
    assert len(spends) == 2  # both steps paid


def test_codex_tools_is_not_offered_to_resolve_a_goal(initialised_graph: GraphStore,
                                                       tmp_path: Path) -> None:
    entries = [{"operation": "identify_constraints", "goal": "*", "output": {
        "constraints": [], "required_capabilities": ["execute_code"]}}]
    kernel, root = start(initialised_graph, "Run the nightly report", [], 2.0, 600,
                         ScriptedProposer.from_file(s.write(tmp_path / "s.yaml", entries)),
                         tmp_path, default_workspace_root())
    outcome = solve(kernel, root)
    # no tool can write the output: the kernel looks for one to build or hire, and never
    # lets the sandbox runner stand in for a resolver
    assert not [a for a in kernel.attempts.of_goal(root)
                if a.resolver_id == "resolver:codex-tools-0"]
    assert outcome.status != "resolved"
