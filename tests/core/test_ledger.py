"""The proposal ledger: hash-chained; any altered, missing or reordered entry is caught."""

from __future__ import annotations

import pytest

from kernel.core.ledger import (
    Ledger,
    dump_entries,
    load_entries,
    verify_chain,
    verify_file,
)
from kernel.core.run import LedgerError, Run


@pytest.fixture
def ledger(run: Run) -> Ledger:
    book = Ledger(run)
    book.append("proposal", "identify_constraints", "resolver:claude-code-0",
                {"constraints": [{"title": "exit 1 on a missing column", "type": "logic"}]},
                goal_id="node:1")
    book.append("proposal", "resolve", "resolver:claude-code-0", {"code": "print('héllo')\n"},
                goal_id="node:1")
    book.append("proposal", "verify", "resolver:codex-tools-0", {"passed": True, "seconds": 0.25})
    run.flush()
    return book


def _verify(run: Run) -> list:
    head, size, entries = load_entries(run.store, run.run_id)
    return verify_chain(entries, head=head, size=size)


def test_an_untouched_ledger_verifies(ledger: Ledger) -> None:
    entries = ledger.entries()
    assert [e.index for e in entries] == [0, 1, 2]
    assert entries[1].prev_hash == entries[0].hash
    assert entries[1].data() == {"code": "print('héllo')\n"}
    assert _verify(ledger.run) == []


def test_altered_content_is_detected(ledger: Ledger) -> None:
    ledger.store.execute_adhoc(
        "MATCH (e:LedgerEntry {index: 1}) SET e.content = replace(e.content, 'héllo', 'hello')",
        {}, write=True)
    problems = _verify(ledger.run)
    assert [(p.index, p.what) for p in problems] == [(1, "altered")]


def test_a_missing_entry_is_detected(ledger: Ledger) -> None:
    ledger.store.execute_adhoc("MATCH (e:LedgerEntry {index: 2}) DETACH DELETE e", {}, write=True)
    assert [(p.index, p.what) for p in _verify(ledger.run)] == [(2, "missing")]
    ledger.store.execute_adhoc("MATCH (e:LedgerEntry {index: 0}) DETACH DELETE e", {}, write=True)
    assert _verify(ledger.run)[0].what == "missing"


def test_reordered_entries_are_detected(ledger: Ledger) -> None:
    ledger.store.execute_adhoc(
        "MATCH (a:LedgerEntry {index: 1}), (b:LedgerEntry {index: 2}) "
        "SET a.index = 2, b.index = 1, a.content_hash = a.content_hash", {}, write=True)
    assert _verify(ledger.run)[0].what == "reordered"


def test_a_stale_writer_cannot_extend_the_chain(ledger: Ledger, run: Run) -> None:
    other = Ledger(Run.load(run.store, run.run_id))
    other.append("decision", "select", "kernel", {"chosen": "a"})
    other.run.flush()
    entries = ledger.entries()
    assert len(entries) == 4
    from kernel.core import ledger as module

    original = module.load_entries
    module.load_entries = lambda store, run_id: (entries[2].hash, 3, entries[:3])
    try:
        ledger.append("decision", "select", "kernel", {"chosen": "b"})
        with pytest.raises(LedgerError, match="moved"):
            ledger.run.flush()
    finally:
        module.load_entries = original
    assert _verify(run) == []


def test_flipping_any_byte_of_an_exported_ledger_is_detected(ledger: Ledger) -> None:
    data = dump_entries(ledger.entries()).encode()
    assert verify_file(data) == []
    for position in range(len(data)):
        flipped = bytearray(data)
        flipped[position] ^= 0x01
        assert verify_file(bytes(flipped)), f"flip at byte {position} went unnoticed"
    assert verify_file(data[:-1])  # truncated
    lines = data.decode().splitlines(keepends=True)
    assert verify_file("".join([lines[0], lines[2], lines[1]]).encode())[0].what == "reordered"
    assert verify_file("".join(lines[:1] + lines[2:]).encode())[0].what == "missing"


def test_pending_entries_ride_the_next_commit_and_stay_chained(run: Run) -> None:
    from kernel.core.budget import Amount, BudgetEnforcer
    from kernel.core.goals import GoalSpec, GoalTree
    from kernel.core.state_machine import Status

    tree, book = GoalTree(run), Ledger(run)
    goal = tree.create_root(GoalSpec("a goal"))
    run.store.stats.reset()
    book.append("proposal", "resolve", "scripted", {"i": 0})
    book.append("observation", "kg/read", "knowledge-graph", {"rows": []})
    assert load_entries(run.store, run.run_id)[1] == 0  # chained, not stored yet
    tree.transition(goal, Status.IDENTIFYING_CONSTRAINTS)
    assert run.store.stats.calls["ledger/append"] == 0  # carried by the commit itself
    assert load_entries(run.store, run.run_id)[1] == 2
    book.append("decision", "select", "kernel", {"chosen": "a"})
    BudgetEnforcer(run).refund(goal, Amount(0, 0), "nothing")  # cannot carry them
    assert run.store.stats.calls["ledger/append"] == 1  # stored just before it
    book.append("decision", "select", "kernel", {"chosen": "b"})
    run.flush()
    head, size, entries = load_entries(run.store, run.run_id)
    assert size == 4 and verify_chain(entries, head=head, size=size) == []
    follows = run.store.execute_adhoc(
        "MATCH (a:LedgerEntry)-[:FOLLOWS]->(b:LedgerEntry) RETURN a.index AS a, b.index AS b "
        "ORDER BY a", {}, write=False)
    assert [tuple(r) for r in follows.rows] == [(1, 0), (2, 1), (3, 2)]
