"""Planning on a user's script whose constraints check-plan would find incomplete (its
1.1 and 1.2): the planner refuses before the task DAG is asked for, naming what is
missing and how to fix it, and writes no plan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kernel.cli.app import app
from kernel.core.ledger import load_entries
from kernel.plan.checks import check_plan
from kernel.plan.compose import ConstraintsIncomplete, check_complete, compose
from kernel.protocol.plan_models import ExtractedConstraints, PlanConstraint, TaskDag
from kernel.store import GraphStore
from tests.conftest import store_env
from tests.plan.test_user_scripts import COST, GOAL, ROLLBACK, _a_little_better
from tests.plan.test_walls import MIGRATION, TIME

DOC = Path(__file__).resolve().parents[2] / "docs" / "scripted-proposals.md"


def _wiki_script() -> dict[str, Any]:
    """The planning example of docs/scripted-proposals.md, as data."""
    text = DOC.read_text()
    block = text.split("<!-- plan-example:begin -->")[1].split("<!-- plan-example:end -->")[0]
    loaded: dict[str, Any] = yaml.safe_load(block.split("```yaml\n")[1].split("```")[0])
    return loaded


def _constraints(script: dict[str, Any]) -> list[dict[str, Any]]:
    entry = next(e for e in script["proposals"] if e["operation"] == "plan_constraints")
    found: list[dict[str, Any]] = entry["output"]["constraints"]
    return found


def _no_consequence(script: dict[str, Any]) -> None:
    for c in _constraints(script):
        c.pop("removal_consequence", None)


def _no_implicit(script: dict[str, Any]) -> None:
    entry = next(e for e in script["proposals"] if e["operation"] == "plan_constraints")
    entry["output"]["constraints"] = [c for c in _constraints(script)
                                      if c["kind"] == "explicit"]


def _misquoted(script: dict[str, Any]) -> None:
    _constraints(script)[0]["source_text"] = "under $500"


@pytest.mark.slow
@pytest.mark.parametrize(("damage", "said"), [
    (_no_consequence, "constraint 'links' is implicit without a removal_consequence: give "
                      "it one (what goes wrong without it)"),
    (_no_implicit, "no implicit constraint: add one a careful engineer would add (kind: "
                   "implicit, with a removal_consequence"),
    (_misquoted, "constraint 'cost' is explicit, but its source_text 'under $500' is not in "
                 "the goal: quote the goal's own words"),
])
def test_a_plan_whose_constraints_are_incomplete_is_refused(
        initialised_graph: GraphStore, data_dir: Path, tmp_path: Path, damage: Any,
        said: str) -> None:
    script = _wiki_script()
    damage(script)
    path = tmp_path / "mine.plan.yaml"
    path.write_text(yaml.safe_dump(script))
    plan_file = tmp_path / "plan.json"
    env = {**store_env(initialised_graph, data_dir), "COLUMNS": "200"}
    runner = CliRunner()
    result = runner.invoke(app, ["plan", "--proposer", "scripted", "--script", str(path),
                                 "--out", str(plan_file)], env=env)
    if plan_file.exists():  # what the refusal prevents: a plan its own checker fails
        failed = {r.id for r in check_plan(json.loads(plan_file.read_text())) if not r.passed}
        raise AssertionError(f"a plan was written and check-plan fails {sorted(failed)}")
    assert result.exit_code == 1, result.output
    assert said in " ".join(str(result.exception).split()), result.exception
    listed = json.loads(runner.invoke(app, ["runs", "--json"], env=env).output)
    assert listed[0]["status"] == "plan refused"
    entries = load_entries(initialised_graph, listed[0]["id"])[2]
    assert [e.operation for e in entries if e.kind == "proposal"] == ["plan_constraints"]
    (refusal,) = [e.data() for e in entries if e.kind == "refusal"]
    assert refusal["reasons"] == ["INVALID_PROPOSAL"]
    assert said in " ".join(refusal["to_proceed"][0].split())


def test_the_planners_check_is_check_plans_own() -> None:
    """Whichever part is missing, the planner's check names it exactly when a plan composed
    from the constraints fails check-plan's 1.1 or 1.2, so the planner never writes one
    that does (it also refuses a consequence of blanks only, which 1.2 lets pass)."""
    bare = ROLLBACK.model_copy(update={"removal_consequence": ""})
    blank = ROLLBACK.model_copy(update={"removal_consequence": "  "})
    quoted = PlanConstraint.model_validate({**COST.model_dump(), "source_text": "under $9"})
    cases = (([TIME, COST], "no implicit constraint"),
             ([TIME, COST, bare], "'rollback' is implicit without"),
             ([TIME, COST, blank], "'rollback' is implicit without"),
             ([ROLLBACK], "no explicit constraint"),
             ([TIME, quoted, ROLLBACK], "'cost' is explicit, but"),
             ([TIME, COST, ROLLBACK], None))
    for constraints, missing in cases:
        doc, _ = compose(GOAL, "run:test", ExtractedConstraints(constraints=constraints),
                         TaskDag(tasks=MIGRATION), _a_little_better)
        failed = {r.id for r in check_plan(doc.as_json()) if not r.passed} & {"1.1", "1.2"}
        if missing is None:
            check_complete(GOAL, constraints)
            assert not failed
            continue
        with pytest.raises(ConstraintsIncomplete, match=missing):
            check_complete(GOAL, constraints)
        assert failed or constraints[-1] is blank, (missing, failed)
