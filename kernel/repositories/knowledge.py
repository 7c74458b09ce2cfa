"""The knowledge graph's reads and writes: patterns and their neighbours, resolver
records on similar goals, failure modes, couplings, build history. ``kernel.kg`` turns
these rows into the models and decisions it serves the loop."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from kernel.core.run import Run
from kernel.store.base import GraphStore, Row


class Coupling(TypedDict):
    """Two leaves coupled by a dependency path, a shared artifact or a shared constraint."""

    a: str
    b: str
    kind: str
    via: str


class BuildHistory(TypedDict):
    """What was ever tried for a capability: tools, builds and requests (each a map)."""

    tools: list[dict[str, Any]]
    builds: list[dict[str, Any]]
    requests: list[dict[str, Any]]


class BuilderRecord(TypedDict):
    builders: list[str]
    builds: list[dict[str, Any]]


class IdentifiedBefore(TypedDict):
    goal_id: str
    run_id: str
    core: list[str]
    inherited: list[str]
    eligible: list[str]
    required_capabilities: list[str] | None


class LeavesBefore(TypedDict):
    atomic: int | None
    decomposed: int | None
    example: str | None


def similar_patterns(store: GraphStore, pattern_id: str, k: int) -> list[Row]:
    return store.run("kg/similar_patterns", {"pattern_id": pattern_id, "k": k})


def resolver_outcomes(store: GraphStore, pattern_id: str, k: int) -> list[Row]:
    return store.run("kg/resolver_outcomes", {"pattern_id": pattern_id, "k": k})


def modality_candidates(store: GraphStore, pattern_id: str, modality: str, k: int) -> list[Row]:
    return store.run("kg/modality_candidates",
                     {"pattern_id": pattern_id, "modality": modality, "k": k})


def failure_modes(store: GraphStore, pattern_id: str, k: int) -> list[Row]:
    return store.run("kg/failure_modes", {"pattern_id": pattern_id, "k": k})


def decompositions(store: GraphStore, pattern_id: str, goal_id: str, k: int) -> list[Row]:
    return store.run("kg/decompositions", {"pattern_id": pattern_id, "goal_id": goal_id, "k": k})


def constraints_applied(store: GraphStore, vector: list[float], candidates: int,
                        threshold: float, k: int) -> list[Row]:
    return store.run("kg/constraints_applied", {"vector": vector, "candidates": candidates,
                                                "threshold": threshold, "k": k})


def build_history(store: GraphStore, tag: str) -> BuildHistory:
    """The mandatory lookup before a build: tools providing ``tag``, earlier builds of it
    in any run, earlier requests for it."""
    row = store.run("grow/lookup_before_build", {"tag": tag})[0]
    return BuildHistory(tools=list(row["tools"]), builds=list(row["builds"]),
                        requests=[r for r in row["requests"] if r is not None])


def builder_record(store: GraphStore, builder_tag: str, rows: int) -> BuilderRecord:
    """The tools that can build, and the latest finished builds with what they cost."""
    return cast(BuilderRecord, store.run("self_model/build_outlook",
                                         {"builder_tag": builder_tag, "rows": rows})[0])


def identified_before(store: GraphStore, normalized: str, description: str, identity: str,
                      run_id: str, k: int) -> list[IdentifiedBefore]:
    return cast(list[IdentifiedBefore], store.run(
        "kg/identified_before", {"normalized": normalized, "description": description,
                                 "identity": f"{identity}:", "run_id": run_id, "k": k}))


def leaves_before(store: GraphStore, pattern_id: str, identity: str,
                  run_id: str) -> LeavesBefore:
    return cast(LeavesBefore, store.run("kg/leaves_before", {
        "pattern_id": pattern_id, "identity": f"{identity}:", "run_id": run_id})[0])


def couplings(store: GraphStore, root_id: str) -> list[Coupling]:
    return cast(list[Coupling], store.run("consistency/couplings", {"root_id": root_id}))


def failure_known(store: GraphStore, failure_id: str) -> bool:
    return bool(store.run("failure/get", {"id": failure_id}))


def nearest_failures(store: GraphStore, vector: list[float], k: int,
                     threshold: float) -> list[str]:
    """Ids of known failure modes within ``threshold`` of ``vector``, nearest first."""
    return [str(r["id"]) for r in store.run("failure/nearest", {
        "vector": vector, "candidates": k, "threshold": threshold})]


def record_diagnosis(run: Run, params: dict[str, Any], *, what: str) -> None:
    run.commit("failure/record_diagnosis", params, what=what, consumes=False)


def upsert_pattern(store: GraphStore, pattern: dict[str, Any]) -> None:
    store.run("pattern/upsert", {"pattern": pattern})


def similar_to(store: GraphStore, vector: list[float], signature: str, candidates: int,
               exclude: str, threshold: float, k: int) -> list[Row]:
    """Patterns with the same signature whose summaries are near ``vector``."""
    return store.run("pattern/similar", {
        "vector": vector, "signature": signature, "candidates": candidates,
        "exclude": exclude, "threshold": threshold, "k": k})


def nearest_goal_patterns(store: GraphStore, vector: list[float], k: int) -> list[Row]:
    return store.run("vector/nearest_goal_patterns", {"vector": vector, "candidates": k})
