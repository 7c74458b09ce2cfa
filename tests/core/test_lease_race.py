"""A run's lease is taken by one process only, even when two take it at the same instant:
the statement locks the run node before it compares the holder."""

from __future__ import annotations

import threading
import time

import pytest

from kernel.core.run import Run
from kernel.store import GraphStore
from kernel.store.neo4j_backend import Neo4jStore


def _params(run_id: str, holder: str) -> dict[str, object]:
    return {"run_id": run_id, "expected": None, "holder": holder, "expires": 10**13}


def test_a_lease_held_by_nobody_is_taken_once(initialised: GraphStore) -> None:
    run = Run.start(initialised, "race")
    first = initialised.run("run/lease_take", _params(run.run_id, "a"))
    second = initialised.run("run/lease_take", _params(run.run_id, "b"))
    assert (first, second) == ([{"holder": "a"}], [])
    assert initialised.run("run/lease", {"run_id": run.run_id})[0]["holder"] == "a"


@pytest.mark.neo4j
def test_two_transactions_taking_a_lease_at_once_do_not_both_get_it(
        neo4j_store: Neo4jStore) -> None:
    """The second transaction starts while the first holds the lease uncommitted; once
    the first commits, the second sees the new holder and takes nothing. (Comparing the
    holder before locking, it read the old one, and both took the lease.)"""
    run = Run.start(neo4j_store, "race")
    query = neo4j_store.catalog.get("run/lease_take")
    text = query.render(None, _params(run.run_id, "a"))
    driver = neo4j_store._driver
    second: dict[str, object] = {}
    with driver.session() as one, driver.session() as two:
        first_tx = one.begin_transaction()
        taken = first_tx.run(text, _params(run.run_id, "a")).data()

        def race() -> None:
            with two.begin_transaction() as tx:
                second["rows"] = tx.run(text, _params(run.run_id, "b")).data()
                tx.commit()

        racer = threading.Thread(target=race)
        racer.start()
        time.sleep(1.0)  # the racer is waiting on the run node's lock
        assert racer.is_alive()
        first_tx.commit()
        racer.join(timeout=30)
    assert taken == [{"holder": "a"}] and second["rows"] == []
    assert neo4j_store.run("run/lease", {"run_id": run.run_id})[0]["holder"] == "a"
