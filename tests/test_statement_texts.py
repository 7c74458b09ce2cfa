"""What each backend is sent: Neo4j plans every distinct text it sees (about a second for
a large guarded commit on this machine), so it gets one text per statement whatever
riders a commit carries; the embedded store, which does not plan ahead, gets only the
clauses a commit uses."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from kernel.bench.solve import bench_solve
from kernel.store import GraphStore


def test_neo4j_gets_one_text_per_statement_and_the_embedded_store_only_the_used_clauses(
        initialised: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    texts: dict[str, set[str]] = defaultdict(set)
    execute = initialised._execute

    def recorded(query: Any, text: str, values: dict[str, Any]) -> Any:
        texts[query.name].add(text)
        return execute(query, text, values)

    monkeypatch.setattr(initialised, "_execute", recorded)
    bench_solve(initialised, 7)
    transitions = texts["goal/transition"]
    if initialised.dialect == "neo4j":
        assert {name: len(sent) for name, sent in texts.items() if len(sent) > 1} == {}
        assert transitions == {initialised.catalog.get("goal/transition").render(None)}
    else:
        assert len(transitions) > 1  # a commit without a spend leaves the spend's clauses out
        assert initialised.catalog.get("goal/transition").render(None) not in transitions
