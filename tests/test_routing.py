"""Learned routing (``kernel.kg.routing.route``) on its own: how candidates are ranked and
when the record alone picks one, without asking the model; and how resolver selection
turns a model's ranking into a plan (only candidates count)."""

from __future__ import annotations

import pytest

from kernel.core.registry import Candidate
from kernel.kg.history import ModalityCandidate, ResolverOutcome
from kernel.kg.routing import NO_RECORD, route
from kernel.protocol.solve_models import PlanStep, ResolverRanking
from kernel.solve.steps.select_resolver import plan_from_ranking


def _candidate(rid: str, matched: int = 1, success_rate: float = 0.5, quality: float = 0.5,
               cost: float = 0.0) -> Candidate:
    return Candidate(id=rid, label=rid, matched=matched, success_rate=success_rate,
                     quality=quality, cost=cost)


def _outcome(rid: str, successes: int, failures: int) -> ResolverOutcome:
    return ResolverOutcome(resolver_id=rid, successes=successes, failures=failures,
                           successes_here=successes, failures_here=failures)


def test_no_candidates_routes_nowhere() -> None:
    routing = route([], [])
    assert routing.ranked == [] and routing.chosen is None


def test_without_a_record_the_registry_order_decides_and_nothing_is_chosen() -> None:
    cheap, dear = _candidate("r:cheap", cost=0.01), _candidate("r:dear", cost=0.5)
    better_match = _candidate("r:match", matched=2, cost=0.9)
    routing = route([dear, cheap, better_match], [])
    assert [c.id for c in routing.ranked] == ["r:match", "r:cheap", "r:dear"]
    assert routing.rates == {"r:dear": NO_RECORD, "r:cheap": NO_RECORD, "r:match": NO_RECORD}
    assert routing.chosen is None


def test_a_record_that_singles_one_out_routes_to_it() -> None:
    a, b = _candidate("r:a", matched=2), _candidate("r:b")
    outcomes = [_outcome("r:b", successes=3, failures=0), _outcome("r:a", 0, 2)]
    routing = route([a, b], outcomes)
    assert routing.chosen is b and routing.ranked[0] is b
    assert "3 successes and 0 failures" in routing.rationale


def test_a_tie_on_the_record_leaves_the_choice_to_the_model() -> None:
    a, b = _candidate("r:a"), _candidate("r:b")
    routing = route([a, b], [_outcome("r:a", 1, 0), _outcome("r:b", 1, 0)])
    assert routing.chosen is None
    assert [c.id for c in routing.ranked] == ["r:a", "r:b"]  # then the registry order


def test_modality_compatibility_breaks_a_tie_on_the_record() -> None:
    a, b = _candidate("r:a"), _candidate("r:b")
    outcomes = [_outcome("r:a", 1, 0), _outcome("r:b", 1, 0)]
    fits = [ModalityCandidate(resolver_id="r:b", modality_successes=1, outcomes=1),
            ModalityCandidate(resolver_id="r:a", modality_successes=0, outcomes=1)]
    routing = route([a, b], outcomes, modality=fits)
    assert [c.id for c in routing.ranked] == ["r:b", "r:a"] and routing.chosen is None
    # the record still comes first: modality only orders equal rates
    better = [_outcome("r:a", 3, 0), _outcome("r:b", 1, 0)]
    assert [c.id for c in route([a, b], better, modality=fits).ranked] == ["r:a", "r:b"]


@pytest.mark.parametrize(("successes", "min_successes", "chosen"), [(1, 1, True), (1, 2, False),
                                                                    (2, 2, True)])
def test_too_few_successes_do_not_decide(successes: int, min_successes: int,
                                         chosen: bool) -> None:
    a, b = _candidate("r:a"), _candidate("r:b")
    routing = route([a, b], [_outcome("r:a", successes, 0)], min_successes)
    assert (routing.chosen is a) is chosen
    assert routing.ranked[0] is a  # its rate ranks it first either way


def test_a_failing_record_ranks_below_no_record() -> None:
    a, b = _candidate("r:a", matched=3), _candidate("r:b")
    routing = route([a, b], [_outcome("r:a", 0, 3)])
    assert [c.id for c in routing.ranked] == ["r:b", "r:a"]
    assert routing.rates["r:a"] < NO_RECORD and routing.chosen is None


def test_a_single_candidate_with_a_record_is_chosen_by_it() -> None:
    only = _candidate("r:only")
    routing = route([only], [_outcome("r:only", 1, 0)])
    assert routing.chosen is only and "vs" not in routing.rationale


def _ranking(*resolver_ids: str) -> ResolverRanking:
    return ResolverRanking(steps=[PlanStep(resolver_id=r, capability="generate_code")
                                  for r in resolver_ids], rationale="the model's reason")


def test_a_ranked_plan_keeps_only_candidates() -> None:
    candidates = [_candidate("r:a"), _candidate("r:b")]
    plan, rationale = plan_from_ranking(_ranking("r:ghost", "r:b"), candidates, "generate_code")
    assert [s.resolver_id for s in plan.steps] == ["r:b"]
    assert rationale == "the model's reason"


def test_a_ranking_naming_no_candidate_falls_back_to_the_kernels_rank_one() -> None:
    candidates = [_candidate("r:a"), _candidate("r:b")]
    plan, rationale = plan_from_ranking(_ranking("r:ghost"), candidates, "summarize")
    assert [(s.resolver_id, s.capability) for s in plan.steps] == [("r:a", "summarize")]
    assert "kernel rank 1" in rationale
