"""Refusal reports: reason codes, ledger evidence, and what would let the run proceed."""

from __future__ import annotations

import pytest

from kernel.core.goals import GoalSpec, GoalTree
from kernel.core.ledger import Ledger, load_entries, verify_chain
from kernel.core.run import Run
from kernel.refusal import REMEDIES, RefusalReason, refuse


def test_a_refusal_names_its_reason_evidence_and_remedy(run: Run) -> None:
    goal = GoalTree(run).create_root(GoalSpec("Ship it"))
    ledger = Ledger(run)
    first = ledger.append("proposal", "identify_constraints", "scripted", {"x": 1}, goal_id=goal)
    second = ledger.append("proposal", "resolve", "scripted", {"x": 2}, goal_id=goal)
    ledger.append("proposal", "resolve", "scripted", {"x": 3}, goal_id="node:other")
    report = refuse(ledger, goal, RefusalReason.BUDGET_EXHAUSTED, "pre-check denied resolve",
                    needed_usd=0.25, needed_seconds=30)
    assert report.reasons == [RefusalReason.BUDGET_EXHAUSTED]
    assert [(e.ledger_index, e.ledger_hash) for e in report.evidence] == [
        (first.index, first.hash), (second.index, second.hash)]
    assert report.to_proceed == [
        "raise the budget: this goal needs $0.2500 and 30s more than it and the goals above "
        "it hold (run again with a larger --budget / --time, or answer its HIRE request "
        "with --add-budget)"]
    run.flush()
    head, size, entries = load_entries(run.store, run.run_id)
    assert entries[-1].kind == "refusal" and entries[-1].data()["detail"] == \
        "pre-check denied resolve"
    assert verify_chain(entries, head=head, size=size) == []


FACTS = {"operation": "resolve", "goal": "Ship it", "needed_usd": 1.5, "needed_seconds": 30,
         "cap_seconds": 600, "run_id": "run:X", "count": 3, "limit": 2,
         "constraint": "p99 < 500ms", "capability": "thermal_analysis", "attempts": "5",
         "constraints": "exit 1 on a missing column", "capabilities": "fault_localization",
         "failure": "invalid_output", "children": "node:1, node:2", "best": 700, "op": "<=",
         "what": "constraints 'c2' and 'c3' together", "searched": "",
         "reached": "'c2' reaches at best 35.5 against <= 24",
         "also": "; the closest choice leaves 'c4' (mid 9 against <= 6.5) UNSAT too",
         "which": "one of them to the value it reaches and 'c4' to 9",
         "more": "add other approaches for the tasks in its walls: t4",
         "figure": "cost_usd = 0.026", "pair": "'pick the date' and 'announce it'",
         "source": "requirements.txt",
         "advice": "set KERNEL_REGISTRY_CERT to the CA bundle (PEM) that signs the index's "
                   "certificate"}


@pytest.mark.parametrize("reason", list(RefusalReason))
def test_every_reason_renders_a_concrete_remedy(reason: RefusalReason) -> None:
    text = REMEDIES[reason].format(**FACTS)
    assert "{" not in text and len(text) > 40
    used = [value for key, value in FACTS.items() if "{" + key in REMEDIES[reason]]
    assert used, f"{reason} says nothing specific"
