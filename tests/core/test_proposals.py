"""Proposals vs commits: recorded before use, served again on resume, replayed exactly,
and any divergence from the record stops the run with the decision named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kernel.core.goals import GoalSpec, GoalTree
from kernel.core.ledger import Ledger, load_entries, verify_chain
from kernel.core.run import Run
from kernel.core.state_machine import Status
from kernel.proposals import DivergenceError, FailedProposal, NoProposalError, Proposals
from kernel.protocol import (
    MODEL_OPERATIONS,
    Estimate,
    Operation,
    PermanentError,
    Proposer,
    Resolution,
    ResolveRequest,
)
from kernel.schema import init_schema
from kernel.store import open_store
from resolvers.scripted import ScriptedProposer, ScriptError, load_script
from tests.conftest import embedded_settings

SCRIPT = """
version: 1
description: two identify rounds, then a fallback
proposals:
  - operation: identify_constraints
    goal: "build a csv*"
    cost_usd: 0.02
    seconds: 1.5
    output:
      constraints:
        - {type: logic, domain: software, title: "exit 1 on a missing column", explicit: true}
  - operation: identify_constraints
    goal: "build a csv*"
    output:
      constraints:
        - {type: semantic, domain: usability, title: "helpful errors", explicit: false}
fallback:
  classify_leaf:
    output: {is_leaf: true, leaf_kind: atomic, leaf_reason: "one small script"}
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "csv.script.yaml"
    path.write_text(SCRIPT)
    return path


def request(goal_id: str, operation: str = "identify_constraints") -> ResolveRequest:
    return ResolveRequest(operation=operation, goal_id=goal_id,
                          goal_description="Build a CSV CLI that sorts rows")


def asked(goal_id: str, operation: str = "identify_constraints",
          ) -> tuple[Operation[Any], ResolveRequest]:
    return MODEL_OPERATIONS[operation], request(goal_id, operation)


class Refusing(Proposer):
    """A proposer that must not be called (everything should come from the ledger)."""

    source = "refusing"

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
        raise AssertionError("estimate should come from the ledger")

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        raise AssertionError("the proposer was called for a recorded proposal")


def _goal(run: Run) -> str:
    return GoalTree(run).create_root(GoalSpec("Build a CSV CLI that sorts rows"))


def test_scripted_proposals_are_recorded_before_use(run: Run, script: Path) -> None:
    goal = _goal(run)
    proposals = Proposals(Ledger(run), ScriptedProposer.from_file(script))
    assert proposals.estimate(request(goal)) == Estimate(cost_usd=0.02, seconds=1.5)
    first = proposals.get(*asked(goal))
    second = proposals.get(*asked(goal))
    leaf = proposals.get(*asked(goal, "classify_leaf"))
    assert first.output.constraints[0].title == "exit 1 on a missing column"
    assert second.output.constraints[0].type == "semantic"
    assert leaf.output.leaf_kind == "atomic" and first.cost_usd == 0.02
    assert (first.ledger_index, second.ledger_index, leaf.ledger_index) == (0, 1, 2)
    entries = Ledger(run).entries()
    assert entries[0].data()["request"]["operation"] == "identify_constraints"
    assert entries[0].source == "scripted:csv.script.yaml"
    assert run.proposals == 3
    with pytest.raises(NoProposalError, match="add an entry or a fallback for identify"):
        proposals.get(*asked(goal))


def test_a_proposal_is_stored_by_the_next_commit_and_asked_again_after_a_crash_before_it(
        run: Run, script: Path) -> None:
    goal = _goal(run)
    proposals = Proposals(Ledger(run), ScriptedProposer.from_file(script))
    proposals.get(*asked(goal))
    assert load_entries(run.store, run.run_id)[1] == 0  # chained, not stored yet
    GoalTree(run).transition(goal, Status.IDENTIFYING_CONSTRAINTS)  # stores it, consumed
    assert load_entries(run.store, run.run_id)[1] == 1
    lost = proposals.get(*asked(goal))  # obtained, then the process dies before committing
    resumed = Run.load(run.store, run.run_id)
    assert resumed.proposals == 1 and load_entries(run.store, run.run_id)[1] == 1
    again = Proposals(Ledger(resumed), ScriptedProposer.from_file(script)).get(*asked(goal))
    assert not again.replayed and again.ledger_index == lost.ledger_index == 1
    assert again.output == lost.output  # asked as the second call on that goal, as before
    resumed.flush()
    head, size, entries = load_entries(run.store, run.run_id)
    assert size == 2 and verify_chain(entries, head=head, size=size) == []


def test_a_resumed_run_is_served_the_proposals_its_commits_stored(run: Run,
                                                                  script: Path) -> None:
    goal = _goal(run)
    proposals = Proposals(Ledger(run), ScriptedProposer.from_file(script))
    proposals.get(*asked(goal))
    run.commit("run/save_queue", {"queue": [goal]}, what="store the queue",
               consumes=False)  # stores the entry, consumes nothing
    resumed = Run.load(run.store, run.run_id)
    assert resumed.proposals == 0
    again = Proposals(Ledger(resumed), Refusing()).get(*asked(goal))
    assert again.replayed and again.output.constraints[0].title == "exit 1 on a missing column"
    assert len(Ledger(resumed).entries()) == 1  # nothing recorded twice


def test_a_replay_reproduces_the_ledger_and_detects_divergence(run: Run, script: Path,
                                                               data_dir: Path) -> None:
    goal = _goal(run)
    original = Proposals(Ledger(run), ScriptedProposer.from_file(script))
    original.get(*asked(goal))
    original.get(*asked(goal, "classify_leaf"))
    run.flush()
    head, _, recorded = load_entries(run.store, run.run_id)

    scratch = open_store(embedded_settings(data_dir, "replay-target"))
    try:
        init_schema(scratch)
        twin = Run(scratch, run.run_id, run.base_ms, 0)
        scratch.run("run/create", {"run_id": run.run_id, "base_ms": run.base_ms,
                                   "started_at": "recorded", "caption": "replay", "config": "{}",
                                   "proposer": None, "model": None})
        assert _goal(twin) == goal  # same commits, same ids
        replay = Proposals(Ledger(twin), None, recorded=recorded)
        replay.get(*asked(goal))
        replay.get(*asked(goal, "classify_leaf"))
        twin.flush()
        replayed_head, size, entries = load_entries(scratch, run.run_id)
        assert (replayed_head, size) == (head, 2) and verify_chain(entries) == []
        with pytest.raises(DivergenceError, match="ends at 2 proposals"):
            replay.get(*asked(goal))

        fresh = Run(scratch, run.run_id, run.base_ms, 0)
        diverging = Proposals(Ledger(fresh), None, recorded=recorded)
        with pytest.raises(DivergenceError, match=r"proposal #0: the ledger answers "
                                                  r"identify_constraints.*now asks classify_leaf"):
            diverging.get(*asked(goal, "classify_leaf"))
    finally:
        scratch.drop_all()
        scratch.close()


def test_an_invalid_proposal_is_rejected(run: Run) -> None:
    class Sloppy(Proposer):
        source = "sloppy"

        def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
            return Estimate(cost_usd=0, seconds=0)

        def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
            return Resolution(output={"constraints": "not a list"}, cost_usd=0.01, seconds=1)

    goal = _goal(run)
    proposal = Proposals(Ledger(run), Sloppy()).get(*asked(goal))
    assert isinstance(proposal, FailedProposal)
    assert "does not validate" in proposal.failure["message"]
    assert proposal.cost_usd == 0.01  # what it cost is still charged (by gate.ask)
    error = proposal.error()
    assert isinstance(error, PermanentError) and error.failure_mode == "invalid_output"
    assert len(Ledger(run).entries()) == 1  # the untrusted output is still on record


@pytest.mark.parametrize(("text", "message"), [
    ("version: 2\n", "version"),
    ("version: 1\nproposals:\n  - {operation: fly, output: {}}\n", "unknown operation 'fly'"),
    ("version: 1\nproposals:\n  - {operation: classify_leaf, output: {is_leaf: maybe}}\n",
     "proposals.0.output.is_leaf"),
    ("version: 1\nproposals: [\n", "not valid YAML: line 3, column 1: expected the node content"),
    ("version: 1\nfallback:\n  decompose: {output: {children: []}}\n",
     "fallback.decompose.output.children"),
])
def test_a_malformed_script_names_the_entry(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ScriptError, match=message) as raised:
        load_script(path)
    assert "\n" not in str(raised.value)  # one line, as every bad-input error
