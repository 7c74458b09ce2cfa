"""Learned routing: resolvers ranked by what happened on goals of the same kind.

Order: empirical success rate on the goal's pattern and the patterns similar to it
(Laplace smoothed, so a resolver with no record sits at 0.5), then modality
compatibility (successes there on inputs of the goal's modality), then the registry's
own order (capability match, global success, quality, cost, id). When the record singles
one candidate out (it succeeded here at least ``min_successes`` times and its rate is
above every other candidate's), the kernel routes to it without asking the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kernel.core.registry import Candidate
from kernel.kg.history import ModalityCandidate, ResolverOutcome

NO_RECORD = 0.5


@dataclass(frozen=True)
class Routing:
    ranked: list[Candidate]
    rates: dict[str, float]
    chosen: Candidate | None  # decided by the record alone
    rationale: str


def route(candidates: list[Candidate], outcomes: list[ResolverOutcome],
          min_successes: int = 1, modality: Sequence[ModalityCandidate] = ()) -> Routing:
    record = {o.resolver_id: o for o in outcomes}
    rates = {c.id: record[c.id].success_rate if c.id in record else NO_RECORD
             for c in candidates}
    fits = {m.resolver_id: m.modality_successes for m in modality}
    ranked = sorted(candidates, key=lambda c: (-rates[c.id], -fits.get(c.id, 0), c.rank_key()))
    if not ranked:
        return Routing([], rates, None, "no candidates")
    best = ranked[0]
    history = record.get(best.id)
    runner_up = max((rates[c.id] for c in ranked[1:]), default=None)
    if history is not None and history.successes >= min_successes and \
            (runner_up is None or rates[best.id] > runner_up):
        return Routing(ranked, rates, best,
                       f"learned route: {history.successes} successes and "
                       f"{history.failures} failures on goals of this kind (rate "
                       f"{rates[best.id]:.2f}{'' if runner_up is None else f' vs {runner_up:.2f}'})")
    return Routing(ranked, rates, None, "the record does not single one candidate out")
