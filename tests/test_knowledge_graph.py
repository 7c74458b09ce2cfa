"""The knowledge graph as a flywheel, end to end on the embedded store: the shipped
experiment (twenty related goals, twice), then what its graph answers to the boot
queries, the prompt blocks built from them, learned routing, and replay of a run that
leaned on history from earlier runs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from embeddings.encoder import Encoder
from kernel.bench.flywheel import PassFigures, run_experiment
from kernel.core.ledger import load_entries
from kernel.core.summary import summary_hash
from kernel.kg.context import StepHistory
from kernel.kg.history import History
from kernel.kg.patterns import Patterns
from kernel.schema import init_schema
from kernel.settings import KernelSettings
from kernel.solve.session import replay
from kernel.store import GraphStore, open_store
from tests.graph_round_trip import assert_export_round_trips

TOP_ROWS = "Print the top 5 rows of inventory.csv by stock"
ROWS_FAILURE = "failure:row_count_ignores_goal"


@dataclass
class Flywheel:
    store: GraphStore
    passes: list[PassFigures]
    history: History
    data_dir: Path


@pytest.fixture(scope="module")
def flywheel(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flywheel]:
    store = open_store(KernelSettings(graph="embedded", data_dir=data_dir,
                                      graph_name="test-flywheel"))
    store.drop_all()
    init_schema(store)
    passes = run_experiment(store)
    encoder = Encoder(tmp_path_factory.mktemp("kg") / "embeddings.sqlite")
    yield Flywheel(store, passes, History(store, Patterns(store, encoder)), data_dir)
    store.drop_all()
    store.close()


def _runs(store: GraphStore, goal: str) -> list[str]:
    """The run ids of a goal, first pass first."""
    runs = sorted(r["id"] for r in store.run("run/list", {}) if r["goal"] == goal)
    assert len(runs) == 2, runs  # one per pass
    return runs


def _pattern(store: GraphStore, run_id: str) -> str:
    root = next(g["id"] for g in store.run("goal/tree", {"run_id": run_id}) if g["depth"] == 0)
    return store.run("goal/get", {"goal_id": root})[0]["view"]["goal"]["pattern_id"]


@pytest.mark.slow
def test_the_second_pass_learns_from_the_first(flywheel: Flywheel) -> None:
    first, second = (p.as_dict() for p in flywheel.passes)
    assert first["resolved"] == second["resolved"] == 20
    # the figures docs/flywheel.md reports
    assert (first["model_calls"], first["retries"], first["builds"], first["hire_requests"]) \
        == (48, 4, 1, 1)
    assert (second["model_calls"], second["retries"], second["builds"],
            second["hire_requests"]) == (0, 0, 0, 0)
    assert first["model_cost_usd"] == 1.01 and second["model_cost_usd"] == 0.0
    # what the graph answered: the control group's work and judgment are the very
    # requests of pass 1, byte for byte, so they are served from pass 1's answers
    assert second["calls_by_operation"] == {}
    assert (first["reused_calls"], second["reused_calls"]) == (0, 12)
    assert first["calls_by_operation"]["classify_leaf"] == 4  # one per kind, then reused
    assert (first["happy_leaves"], second["happy_leaves"]) == (18, 20)
    assert first["max_calls_per_happy_leaf"] <= 4 and second["max_calls_per_happy_leaf"] <= 4
    assert not set(second["built"]) & set(first["built"])  # nothing built twice
    assert not set(second["asked"]) & set(first["asked"])  # no question asked twice


@pytest.mark.slow
def test_similar_goals_share_history_and_dissimilar_ones_do_not(flywheel: Flywheel) -> None:
    run = _runs(flywheel.store, TOP_ROWS)[0]
    pattern = _pattern(flywheel.store, run)
    similar = flywheel.history.similar_patterns(pattern)
    assert similar and all(s.summary.startswith("Print the top") for s in similar)
    assert all(s.score >= 0.8 and s.goals == 2 and s.resolved == 2 for s in similar)
    # the same words under another constraint signature share nothing
    assert flywheel.history.patterns.similar(TOP_ROWS, (("semantic", "writing"),)) == []


@pytest.mark.slow
def test_the_boot_queries_answer_from_the_graph(flywheel: Flywheel) -> None:
    history = flywheel.history
    pattern = _pattern(flywheel.store, _runs(flywheel.store, TOP_ROWS)[0])
    outcomes = {o.resolver_id: o for o in history.resolver_outcomes(pattern)}
    built = next(r for r in outcomes if r.startswith("resolver:tabular-query"))
    # the model failed twice on the first top-rows goal; the built tool never failed
    assert (outcomes["resolver:claude-code-0"].successes,
            outcomes["resolver:claude-code-0"].failures) == (0, 2)
    assert outcomes["resolver:claude-code-0"].failure_modes == [ROWS_FAILURE]
    assert outcomes[built].failures == 0 and outcomes[built].successes >= 2
    assert outcomes[built].successes_here == 2  # once per pass on this very pattern
    assert [(f.id, f.occurrences) for f in history.failure_modes(pattern)] == [(ROWS_FAILURE, 2)]
    modality = {m.resolver_id: m for m in history.modality_candidates(pattern, "text")}
    assert modality[built].modality_successes == outcomes[built].successes
    applied = history.constraints_applied("Print the top 9 rows of returns.csv by refund")
    assert [(c.title, c.type, c.domain) for c in applied] == [
        ("prints exactly the rows asked for", "logic", "data")]
    assert 10 <= applied[0].goals <= 16  # most of the eight top-rows goals, twice
    lookup = history.lookup_before_build("tabular_query")
    assert [t["id"] for t in lookup.tools] == [built]
    assert [b["status"] for b in lookup.builds] == ["resolved"]
    hired = history.lookup_before_build("http_fetch")
    assert [t["id"] for t in hired.tools] == ["resolver:treasury-rates"]
    assert [q["status"] for q in hired.requests] == ["delivered"]
    # usage statistics and quality moved with the verified outcomes
    tool = flywheel.store.run("registry/get", {"id": built})[0]["resolver"]
    assert tool["usage_count"] == tool["success_count"] == 16
    # the rows a tool reports are its claim (sigma 0.9 each), so completeness stays below
    assert tool["q_executability"] > 0.9 and tool["q_completeness"] > 0.85


@pytest.mark.slow
def test_the_prompt_block_is_the_graph_content_recorded_with_its_proposal(
        flywheel: Flywheel) -> None:
    store = flywheel.store
    second = _runs(store, TOP_ROWS)[1]
    entries = load_entries(store, second)[2]
    observed = next(e for e in entries if e.operation == "history/resolve")
    fed = next(e for e in entries[observed.index + 1:] if e.kind == "proposal")
    assert fed.operation == "resolve"
    rows = StepHistory.model_validate(observed.data()["rows"])
    block = fed.data()["context"]
    assert block == rows.block(TOP_ROWS, 3000)
    assert block == "\n".join([  # as docs/knowledge-graph.md shows it
        f'[RESOLUTION HISTORY for goal: "{TOP_ROWS}"]',
        "Known failure modes for this kind of goal:",
        "  - row_count_ignores_goal (2 occurrences): the row count is fixed at ten instead of "
        "read from the goal",
        "[END RESOLUTION HISTORY]"])
    # the rows are what the graph held: the boot query agrees with them
    pattern = _pattern(store, second)
    live = {f.id: f.occurrences for f in flywheel.history.failure_modes(pattern)}
    assert {f.id: f.occurrences for f in rows.failure_modes} == live
    # bounded: a small limit cuts whole lines and says so
    cut = rows.block(TOP_ROWS, 60)
    assert cut.endswith("more lines not shown\n[END RESOLUTION HISTORY]")


@pytest.mark.slow
def test_learned_routing_skips_the_ranking_call_and_the_failing_resolver(
        flywheel: Flywheel) -> None:
    store = flywheel.store
    second = _runs(store, TOP_ROWS)[1]
    entries = load_entries(store, second)[2]
    proposals = [e for e in entries if e.kind == "proposal"]
    assert [e.operation for e in proposals] == ["resolve"]  # the graph answered the rest
    assert proposals[0].source.startswith("resolver:tabular-query")  # the built tool ran
    reused = {e.operation: e for e in entries if e.operation.startswith("reuse/")}
    assert set(reused) == {"reuse/identify", "reuse/classify_leaf"}
    assert all(e.kind == "observation" and e.source == "knowledge-graph"
               for e in reused.values())
    first = _runs(store, TOP_ROWS)[0]
    source = reused["reuse/identify"].data()["rows"]
    assert source["run_id"] == first and source["constraints"] == []
    assert source["required_capabilities"] == ["generate_code"]
    route = next(e for e in entries if e.operation == "history/route").data()["rows"]
    assert {o["resolver_id"] for o in route["resolver_outcomes"]} >= {"resolver:claude-code-0"}


@pytest.mark.slow
def test_a_run_that_used_earlier_history_replays_identically(flywheel: Flywheel) -> None:
    """The replay's scratch graph has none of the earlier runs: the recorded history is
    served from the ledger, so every decision comes out the same."""
    second = _runs(flywheel.store, "Summarise the release notes of version 2.0")[1]
    settings = KernelSettings(data_dir=flywheel.data_dir, graph_name="test-flywheel")
    result = replay(settings, second)
    assert result.divergence is None and result.identical
    assert result.replay_hash == summary_hash(flywheel.store, second)


PROVENANCE_QUERY = """
MATCH (p:GoalPattern)<-[:TRIED_FOR]-(a:Attempt)-[:FAILED_BECAUSE]->(f:FailureMode)
MATCH (a)-[:PROPOSED_BY]->(:Actor {kind: $kind})
WHERE p.normalized CONTAINS 'top'
RETURN f.name AS name, f.description AS description, count(a) AS attempts
ORDER BY attempts DESC
"""


@pytest.mark.slow
def test_provenance_answers_which_proposer_failed_how_in_one_statement(
        flywheel: Flywheel) -> None:
    """The statement docs/knowledge-graph.md shows, with the kind as a parameter."""
    store = flywheel.store
    rows = store.execute_adhoc(PROVENANCE_QUERY, {"kind": "scripted"}, write=False).records()
    assert rows == [{"name": "row_count_ignores_goal", "attempts": 2,
                     "description": "the row count is fixed at ten instead of read from the goal"}]
    assert store.execute_adhoc(PROVENANCE_QUERY, {"kind": "anthropic"},
                               write=False).records() == []
    runs = store.execute_adhoc(
        "MATCH (r:Run)-[:PROPOSED_BY]->(who:Actor) "
        "RETURN DISTINCT r.proposer AS proposer, r.model AS model, who.id AS actor",
        {}, write=False).records()
    assert runs == [{"proposer": "scripted", "model": "script.yaml",
                     "actor": "actor:scripted:script.yaml"}]


@pytest.mark.slow
def test_the_flywheel_graph_exports_and_round_trips(flywheel: Flywheel, tmp_path: Path) -> None:
    """Forty runs with tools built and hired: `kernel graph export` exits 0, and the file
    imported into an empty graph exports the same bytes."""
    with open_store(KernelSettings(graph="embedded", data_dir=flywheel.data_dir,
                                   graph_name="test-flywheel-copy")) as copy:
        try:
            lines = assert_export_round_trips(flywheel.store, flywheel.data_dir, tmp_path,
                                              into=copy)
        finally:
            copy.drop_all()
    assert sum('"kind":"node","label":"Run"' in line for line in lines) == 40
