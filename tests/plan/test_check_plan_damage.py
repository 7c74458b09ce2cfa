"""check-plan accepts only what the planner would write: each kind of damage a person
could do to a plan file (or a model to its output) fails an assertion with its id, and
the command exits 1, never 4."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kernel.cli.app import app
from kernel.plan.checks import check_plan, check_text
from kernel.plan.compose import compose
from kernel.plan.digest import inputs_digest
from kernel.protocol.plan_models import ExtractedConstraints, PlanConstraint, TaskDag
from tests.plan.test_walls import MIGRATION, TIME, _survey

Doc = dict[str, Any]
COST = PlanConstraint(id="cost", title="under $25,000", kind="explicit", type="logic",
                      metric="cost_usd", aggregation="sum", op="<=", limit=25000, unit="USD",
                      source_text="under $25,000")
ROLLBACK = PlanConstraint(id="rollback", title="the old database stays until verified",
                          kind="implicit", type="semantic",
                          removal_consequence="a failed cutover loses orders")
GOAL = "migrate the orders database within 6.5 weeks and under $25,000"


def _plan(constraints: list[PlanConstraint]) -> Doc:
    doc, _ = compose(GOAL, "run:damage", ExtractedConstraints(constraints=constraints),
                     TaskDag(tasks=MIGRATION), _survey)
    return doc.as_json()


REPAIRED = _plan([TIME, COST, ROLLBACK])


def _failed(doc: Doc) -> set[str]:
    return {r.id for r in check_plan(doc) if not r.passed}


def test_the_undamaged_plan_passes() -> None:
    assert REPAIRED["repair"]["feasible"] and REPAIRED["walls"]
    assert not _failed(REPAIRED), [r for r in check_plan(REPAIRED) if not r.passed]


def _set(path: str, value: Any) -> Callable[[Doc], None]:
    def damage(doc: Doc) -> None:
        *parents, last = path.split(".")
        at: Any = doc
        for part in parents:
            at = at[int(part)] if part.isdigit() else at[part]
        at[int(last) if last.isdigit() else last] = value
    return damage


def _row_path_differs(doc: Doc) -> None:
    row = next(r for r in doc["rollup"] if r["constraint_id"] == "time")
    row["critical_path"] = list(reversed(row["critical_path"]))


def _refusal_beside_repair(doc: Doc) -> None:
    doc["refusal"] = {"reason": "NO_FEASIBLE_REPAIR", "conflict": ["time"], "constraints": [],
                      "closest": {}, "searched": doc["repair"]["searched"],
                      "combinations": doc["repair"]["combinations"], "to_proceed": ["relax"]}


def _covered_less(doc: Doc) -> None:
    doc["repair"]["searched"] = 1


def _sealed(damage: Callable[[Doc], None]) -> Callable[[Doc], None]:
    """Damage to the plan's inputs with the digest sealed again, so that only the
    recomputation can catch it, not 0.3."""
    def sealed(doc: Doc) -> None:
        damage(doc)
        doc["inputs_digest"] = inputs_digest(doc)
    sealed.__name__ = damage.__name__
    return sealed


@_sealed
def _projection_of_no_constraint(doc: Doc) -> None:
    """An approach that says what it would do to a constraint the plan does not have."""
    approach = doc["survey"]["surveys"][0]["approaches"][0]
    approach["projections"] = {"uptime": {"low": 99.0, "mid": 99.5, "high": 99.9}}


@_sealed
def _semantic_claim_sealed_as_measured(doc: Doc) -> None:
    """A claim about a judgment (rollback), with a computed value that agrees, as though
    the constraint were a number the kernel rolls up."""
    doc["claims"].append({"constraint_id": "rollback", "estimate": "mid", "value": 0,
                          "computed": 0, "agrees": True})


@_sealed
def _budget_without_its_number(doc: Doc) -> None:
    """The explicit budget's limit dropped, and everything computed from it removed so
    that the rest agrees: no rollup row, no waterfall, no cost in the repair."""
    cost = next(c for c in doc["constraints"] if c["id"] == "cost")
    cost["limit"] = None
    doc["rollup"] = [r for r in doc["rollup"] if r["constraint_id"] != "cost"]
    doc["waterfall"] = None
    doc["repair"]["rollup"] = [r for r in doc["repair"]["rollup"]
                               if r["constraint_id"] != "cost"]
    doc["repair"]["waterfall"] = None
    doc["repair"]["cost"] = {}


def test_damage_to_the_inputs_passes_everything_but_what_it_breaks() -> None:
    """Each sealed damage fails only its own assertion (and the plan's arithmetic still
    holds), so it is the new rule that catches it, not an accident."""
    for damage, expected in ((_projection_of_no_constraint, {"1.3"}),
                             (_semantic_claim_sealed_as_measured, {"3.6"}),
                             (_budget_without_its_number, {"0.4", "1.3"})):
        doc = copy.deepcopy(REPAIRED)
        damage(doc)
        assert _failed(doc) == expected, (damage.__name__, [
            r for r in check_plan(doc) if not r.passed])


@pytest.mark.parametrize(("damage", "expected"), [
    (_projection_of_no_constraint, "1.3"),
    (_semantic_claim_sealed_as_measured, "3.6"),
    (_budget_without_its_number, "1.3"),
    (_set("tasks.0.confidence", 1.5), "0.4"),
    (_set("tasks.0.confidence", -0.1), "0.4"),
    (_set("feasible", False), "0.4"),
    (_set("verdict", "SAT"), "0.4"),
    (_set("units", {"weeks": "w"}), "0.4"),
    (_set("rollup.0.status", "FINE"), "0.4"),
    (_row_path_differs, "6.4"),
    (_covered_less, "5.9"),
    (_refusal_beside_repair, "5.10"),
    (_set("walls.0.excess", 0.25), "4.0"),
    (_set("walls.0.cluster", ["replicate"]), "4.0"),
], ids=lambda x: getattr(x, "__name__", str(x)))
def test_each_kind_of_damage_fails_its_assertion(damage: Callable[[Doc], None],
                                                 expected: str) -> None:
    doc = copy.deepcopy(REPAIRED)
    damage(doc)
    assert expected in _failed(doc)


@pytest.mark.parametrize(("spliced", "said"), [
    ('"limit": Infinity', "Infinity is not a number"),
    ('"limit": NaN', "NaN is not a number"),
    ('"limit": 1e309', "too large"),
])
def test_numbers_that_are_not_finite_fail_0_5_and_never_raise(spliced: str, said: str,
                                                               tmp_path: Path) -> None:
    text = json.dumps(REPAIRED, indent=1).replace('"limit": 6.5', spliced, 1)
    assert spliced in text
    results = {r.id: r for r in check_text(text)}
    assert not results["0.5"].passed and said in results["0.5"].detail
    path = tmp_path / "plan.json"
    path.write_text(text)
    done = CliRunner().invoke(app, ["check-plan", str(path)])
    assert done.exit_code == 1, done.output


def test_a_key_written_twice_fails_0_5() -> None:
    text = json.dumps(REPAIRED, indent=1)
    twice = text.replace('"rollup": [', '"rollup": [], "rollup": [', 1)
    results = {r.id: r for r in check_text(twice)}
    assert not results["0.5"].passed and "'rollup' appears twice" in results["0.5"].detail
    assert {r.id for r in check_text(text) if not r.passed} == set()
