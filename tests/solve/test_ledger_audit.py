"""``kernel ledger verify`` vouches for the graph: a run's committed goals, attempts and
budget events must be what its ledger implies; replay checks the chain first and calls
tampering tampering."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kernel.core.ledger import entry_hash, load_entries
from kernel.schema import init_schema
from kernel.settings import KernelSettings
from kernel.solve.dispatch import solve
from kernel.solve.session import replay
from kernel.store import open_store
from kernel.store.base import GraphStore
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import ScriptedProposer
from tests.conftest import embedded_settings
from tests.starting import start

SCRIPT = Path(__file__).resolve().parents[2] / "seeds" / "examples" / "launch-plan.script.yaml"
_numbers = iter(range(10_000))


@pytest.fixture
def solved(data_dir: Path, tmp_path: Path) -> Iterator[tuple[KernelSettings, GraphStore, str]]:
    settings = embedded_settings(data_dir, f"audit-{next(_numbers)}")
    store = open_store(settings)
    try:
        init_schema(store)
        kernel, root = start(store, "Plan a product launch", [], 5.0, 600,
                             ScriptedProposer.from_file(SCRIPT), tmp_path,
                             default_workspace_root())
        assert solve(kernel, root).status == "resolved"
        yield settings, store, kernel.run.run_id
    finally:
        store.drop_all()
        store.close()


def _write(store: GraphStore, text: str, **params: object) -> None:
    store.execute_adhoc(text, params, write=True)


@pytest.mark.slow
def test_an_untouched_run_is_what_its_ledger_implies(solved) -> None:  # type: ignore[no-untyped-def]
    settings, _, run_id = solved
    result = replay(settings, run_id)
    assert result.identical and result.differences == () and result.tampered is None


TAMPERINGS: dict[str, tuple[Callable[[GraphStore, str], None], str]] = {
    "goal status": (lambda s, r: _write(
        s, "MATCH (g:Goal {run_id: $r}) WHERE g.summary = 'launch part: set the pricing' "
           "SET g.status = 'infeasible'", r=r), "status is 'infeasible' in the graph"),
    "attempt cost": (lambda s, r: _write(
        s, "MATCH (a:Attempt)-[:FOR]->(g:Goal {run_id: $r}) WITH a ORDER BY a.id LIMIT 1 "
           "SET a.cost = a.cost + 1000000", r=r), "cost is"),
    "budget event": (lambda s, r: _write(
        s, "MATCH (e:BudgetEvent {kind: 'spend'})-[:CHARGED_TO]->(:Goal {run_id: $r}) "
           "WITH e ORDER BY e.id LIMIT 1 SET e.cost = 1", r=r), "budget event"),
    "deleted spend": (lambda s, r: _write(
        s, "MATCH (e:BudgetEvent {kind: 'spend'})-[:CHARGED_TO]->(:Goal {run_id: $r}) "
           "WITH e ORDER BY e.id DESC LIMIT 1 DETACH DELETE e", r=r), "missing from the graph"),
}


@pytest.mark.slow
@pytest.mark.parametrize("change", sorted(TAMPERINGS))
def test_a_changed_committed_state_is_named(solved, change: str) -> None:  # type: ignore[no-untyped-def]
    settings, store, run_id = solved
    tamper, expected = TAMPERINGS[change]
    tamper(store, run_id)
    result = replay(settings, run_id)
    assert not result.identical
    assert any(expected in d for d in result.differences), result.differences


@pytest.mark.slow
def test_a_truncated_tail_is_caught(solved) -> None:  # type: ignore[no-untyped-def]
    settings, store, run_id = solved
    _, size, entries = load_entries(store, run_id)
    last, before = entries[-1], entries[-2]
    _write(store, "MATCH (e:LedgerEntry {id: $id}) DETACH DELETE e", id=last.id)
    _write(store, "MATCH (r:Run {id: $r}) SET r.ledger_head = $h, r.ledger_size = $n",
           r=run_id, h=before.hash, n=size - 1)  # a consistent chain, one entry short
    result = replay(settings, run_id)
    assert result.tampered is None and not result.identical
    assert result.differences, "the graph holds what the shorter ledger does not imply"


def test_a_consistent_re_chain_is_caught(solved) -> None:  # type: ignore[no-untyped-def]
    settings, store, run_id = solved
    _, _, entries = load_entries(store, run_id)
    target = next(e for e in entries if e.kind == "proposal" and "Done, concretely" in e.content)
    prev = entries[target.index - 1].hash
    for entry in entries[target.index:]:
        content = entry.content.replace("Done, concretely", "Done, vaguely") \
            if entry.index == target.index else entry.content
        digest = hashlib.sha256(content.encode()).hexdigest()
        new = entry_hash(entry.run_id, entry.index, entry.kind, entry.operation,
                         entry.goal_id, entry.source, digest, prev)
        _write(store, "MATCH (e:LedgerEntry {id: $id}) SET e.content = $c, "
                      "e.content_hash = $d, e.prev_hash = $p, e.hash = $h",
               id=entry.id, c=content, d=digest, p=prev, h=new)
        prev = new
    _write(store, "MATCH (r:Run {id: $r}) SET r.ledger_head = $h", r=run_id, h=prev)
    result = replay(settings, run_id)
    assert result.tampered is None  # the chain itself verifies ...
    assert not result.identical and result.differences  # ... but not the state built on it


def test_a_broken_chain_is_reported_as_tampering(solved) -> None:  # type: ignore[no-untyped-def]
    settings, store, run_id = solved
    _write(store, "MATCH (e:LedgerEntry {run_id: $r}) WITH e ORDER BY e.index SKIP 3 LIMIT 1 "
                  "SET e.content = e.content + ' '", r=run_id)
    result = replay(settings, run_id)
    assert result.tampered is not None and "altered" in result.tampered
    assert result.divergence is None  # tampering, not a divergence
