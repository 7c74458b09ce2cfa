"""Planning mode's document, computed from the proposals alone (no store, no ledger).

Given the extracted constraints, a valid task DAG and a way to ask for approach surveys,
everything in the plan document is derived here: the rollup with its statuses, the
claims checked by Z3, the waterfall, walls, survey triggers, the repair, its side
effects, and (with no feasible repair) the refusal with its minimal conflict. The
planner records and stores what this returns; tests generate plans with it directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kernel.errors import Refused
from kernel.plan import feasibility as f
from kernel.plan.digest import SCHEMA, inputs_digest
from kernel.plan.document import PlanDocument, PlanRefusal
from kernel.plan.z3check import longest_chain_is, sum_is
from kernel.protocol.plan_models import (
    Approach,
    ApproachSurvey,
    ExtractedConstraints,
    PlanConstraint,
    PlanTask,
    TaskDag,
    TaskSurvey,
)
from kernel.refusal import RefusalReason, remedy

SurveyAsk = Callable[[dict[str, list[str]], list[f.Rollup]], ApproachSurvey]


class PlanRefused(Refused):
    """The planner cannot produce a plan (budget, an unusable proposal)."""


class SurveyUnusable(PlanRefused):
    """The survey leaves a task that must be surveyed without a usable survey: a plan
    written from it would fail check-plan, so none is written. ``problems`` name each
    task with what to add."""

    def __init__(self, problems: list[str], unsat: str) -> None:
        self.problems = problems
        super().__init__(f"survey_approaches: {'; '.join(problems)} ({unsat})")


class ConstraintsIncomplete(PlanRefused):
    """The proposed constraints lack what check-plan requires of them (its 1.1 and 1.2):
    a plan from them would fail it, so none is written. ``problems`` name each gap with
    its fix."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(f"plan_constraints: {'; '.join(problems)}")


def completeness_problems(goal: str, constraints: list[PlanConstraint]) -> list[str]:
    """What keeps the constraints from check-plan's 1.1 (explicit ones, each quoting the
    goal) and 1.2 (implicit ones, each with its removal consequence), each with its fix."""
    explicit = [c for c in constraints if c.kind == "explicit"]
    implicit = [c for c in constraints if c.kind == "implicit"]
    problems = [] if explicit else [
        "no explicit constraint: add one for what the goal itself states (kind: explicit, "
        "with source_text quoting the goal's words)"]
    problems += [f"constraint '{c.id}' is explicit, but its source_text {c.source_text!r} "
                 "is not in the goal: quote the goal's own words, or make it implicit with "
                 "a removal_consequence" for c in explicit
                 if c.source_text.lower() not in goal.lower()]
    if not implicit:
        problems.append("no implicit constraint: add one a careful engineer would add "
                        "(kind: implicit, with a removal_consequence saying what goes wrong "
                        "without it)")
    problems += [f"constraint '{c.id}' is implicit without a removal_consequence: give it "
                 "one (what goes wrong without it)" for c in implicit
                 if not c.removal_consequence.strip()]
    return problems


def check_complete(goal: str, constraints: list[PlanConstraint]) -> None:
    """Raise ``ConstraintsIncomplete`` when check-plan's 1.1 or 1.2 would fail."""
    problems = completeness_problems(goal, constraints)
    if problems:
        raise ConstraintsIncomplete(problems)


def compose(goal: str, run_id: str, extracted: ExtractedConstraints, dag: TaskDag,
            ask_survey: SurveyAsk, verifications: list[dict[str, Any]] | None = None,
            ) -> tuple[PlanDocument, f.Repair | None]:
    """The plan document of a valid DAG (``ask_survey`` is called only when some task
    triggers a survey), and the repair it holds."""
    constraints = extracted.constraints
    flags: list[str] = _constraint_flags(goal, constraints)
    tasks = dag.tasks
    rollups = f.rollup(constraints, tasks)
    claims = _check_claims(dag, constraints, tasks, rollups, flags)
    walls = f.walls(rollups, tasks)
    triggers = f.survey_triggers(tasks, walls)
    surveys: list[TaskSurvey] = []
    if triggers:
        surveys = _usable_surveys(ask_survey(triggers, rollups), triggers, flags)
        problems = survey_problems(constraints, tasks, rollups, walls, triggers, surveys)
        if problems:
            raise SurveyUnusable(problems, _unsat_words(rollups))
    fixed = f.repair(constraints, tasks, surveys) if any(
        r.status == "UNSAT" for r in rollups) else None
    _repair_flags(fixed, flags)
    document = _document(goal, run_id, constraints, extracted.open_questions, dag, rollups,
                         claims, walls, triggers, surveys, fixed, flags, verifications or [])
    if fixed is not None and not fixed.feasible:
        document = document.model_copy(update={"refusal": PlanRefusal.model_validate({
            "reason": RefusalReason.NO_FEASIBLE_REPAIR.value, "conflict": fixed.conflict,
            "constraints": fixed.blocking, "closest": fixed.closest,
            "searched": fixed.searched, "combinations": fixed.combinations,
            "to_proceed": [remedy(RefusalReason.NO_FEASIBLE_REPAIR, run_id,
                                  **refusal_facts(fixed, walls))]})})
    return document, fixed


def refusal_facts(fixed: f.Repair, walls: list[dict[str, Any]]) -> dict[str, Any]:
    """The words of a NO_FEASIBLE_REPAIR refusal: the conflict, what each of its members
    reaches at best while the others are met, every other constraint the closest choice
    leaves UNSAT, whether the search was cut short, and the tasks of their walls to find
    other ways for."""
    names = [f"'{b['constraint_id']}'" for b in fixed.blocking]
    what = f"constraint {names[0]}" if len(names) == 1 else \
        f"constraints {', '.join(names[:-1])} and {names[-1]} together"
    reached = [f"{n} reaches at best {b['best_mid']:g} (mid estimate) against {b['op']} "
               f"{b['limit']:g}" for n, b in zip(names, fixed.blocking, strict=True)]
    lead = "" if len(names) == 1 else "while the others are met, "
    searched = "" if not fixed.truncated else (
        f" (the search stopped after {fixed.searched:,} of {fixed.combinations:,} "
        "combinations, so one beyond them may work)")
    also, relax_also = _also_unsat(fixed)
    return {"what": what, "reached": lead + "; ".join(reached), "searched": searched,
            "also": also, "which": ("it" if len(names) == 1 else "one of them")
            + " to the value it reaches" + relax_also,
            "more": _more_approaches(fixed.conflict + [r["constraint_id"] for r in
                                                       _left_unsat(fixed)], walls)}


def _left_unsat(fixed: f.Repair) -> list[dict[str, Any]]:
    """The rollup rows the closest choice leaves UNSAT outside the conflict: a minimal
    conflict is one reason a plan fails, and these are the others."""
    return [r for r in (fixed.closest or {}).get("rollup") or []
            if r["status"] == "UNSAT" and r["constraint_id"] not in fixed.conflict]


def _also_unsat(fixed: f.Repair) -> tuple[str, str]:
    """The words naming every constraint the closest choice leaves UNSAT beside the
    conflict (what it reaches there), and what relaxing them means."""
    left = _left_unsat(fixed)
    if not left:
        return "", ""
    named = [f"'{r['constraint_id']}'" for r in left]
    values = [f"{n} (mid {r['totals']['mid']:g} against {r['op']} {r['limit']:g})"
              for n, r in zip(named, left, strict=True)]
    return (f"; the closest choice leaves {' and '.join(values)} UNSAT too",
            " and " + " and ".join(f"{n} to {r['totals']['mid']:g}"
                                   for n, r in zip(named, left, strict=True)))


def _more_approaches(conflict: list[str], walls: list[dict[str, Any]]) -> str:
    """Which tasks more approaches would help: those of the walls of the constraints
    named (every one was surveyed: a plan with a wall task unsurveyed is refused before
    its repair, see ``survey_problems``)."""
    in_walls = [t for w in walls if w["constraint_id"] in conflict for t in w["cluster"]]
    in_walls = list(dict.fromkeys(in_walls))
    if in_walls:
        return f"add other approaches for the tasks in its walls: {', '.join(in_walls)}"
    return "add approaches for the tasks that carry it"


def _repair_flags(fixed: f.Repair | None, flags: list[str]) -> None:
    """What a repair does beside its purpose: SAT constraints it makes TIGHT, and a search
    cut short."""
    if fixed is None:
        return
    for effect in fixed.side_effects:
        pessimistic = "high" if effect["op"] in ("<=", "<") else "low"
        flags.append(f"the repair moves {effect['constraint_id']} from SAT to TIGHT "
                     f"({pessimistic} {effect['totals'][pessimistic]:g} against "
                     f"{effect['op']} {effect['limit']:g})")
    if fixed.truncated:
        flags.append(f"the repair search stopped after {fixed.searched:,} of "
                     f"{fixed.combinations:,} combinations (MAX_COMBINATIONS): a better "
                     "choice may exist beyond them")


def _constraint_flags(goal_text: str, constraints: list[PlanConstraint]) -> list[str]:
    """The constraint gaps of a plan composed without the planner's ``check_complete``
    (which refuses them first)."""
    flags = []
    for c in constraints:
        if c.kind == "explicit" and c.source_text and \
                c.source_text.lower() not in goal_text.lower():
            flags.append(f"{c.id}: explicit, but its source text is not in the goal")
        if c.kind == "implicit" and not c.removal_consequence:
            flags.append(f"{c.id}: implicit without a removal consequence")
    return flags


def _check_claims(dag: TaskDag, constraints: list[PlanConstraint], tasks: list[PlanTask],
                  rollups: list[f.Rollup], flags: list[str]) -> list[dict[str, Any]]:
    """Z3 re-derives the computed totals and checks the model's stated ones."""
    by_id = {c.id: c for c in constraints}
    rolled = {r.constraint_id: r for r in rollups}
    for r in rollups:  # the kernel's own arithmetic, checked independently
        ok = sum_is([f.estimate(t, r.metric, "mid") for t in tasks], r.totals["mid"]) \
            if r.aggregation == "sum" else longest_chain_is(
                {t.id: f.estimate(t, r.metric, "mid") for t in tasks},
                {t.id: t.depends_on for t in tasks}, r.totals["mid"]) \
            if r.aggregation == "critical_path" else True
        if not ok:
            raise PlanRefused(f"internal check failed: Z3 disagrees with the rollup of "
                              f"{r.constraint_id}")
    checked = []
    for claim in dag.claims:
        constraint, rollup = by_id.get(claim.constraint_id), rolled.get(claim.constraint_id)
        if constraint is None or rollup is None:
            flags.append(f"claim about {claim.constraint_id}: no such checkable constraint")
            continue
        values = {t.id: f.estimate(t, rollup.metric, claim.estimate) for t in tasks}
        agrees = sum_is(list(values.values()), claim.value) if rollup.aggregation == "sum" else \
            longest_chain_is(values, {t.id: t.depends_on for t in tasks}, claim.value) \
            if rollup.aggregation == "critical_path" else claim.value == rollup.totals[claim.estimate]
        if not agrees:
            flags.append(f"the narrative states {claim.constraint_id} {claim.estimate} = "
                         f"{claim.value}; computed {rollup.totals[claim.estimate]} (computed wins)")
        checked.append({**claim.model_dump(mode="json"), "computed": rollup.totals[claim.estimate],
                        "agrees": agrees})
    return checked


def _usable_surveys(survey: ApproachSurvey, triggers: dict[str, list[str]],
                    flags: list[str]) -> list[TaskSurvey]:
    usable = []
    for s in survey.surveys:
        if s.task_id not in triggers:
            flags.append(f"survey of {s.task_id} ignored: the task did not trigger one")
            continue
        usable.append(s)
    return usable


def survey_problems(constraints: list[PlanConstraint], tasks: list[PlanTask],
                    rollups: list[f.Rollup], walls: list[dict[str, Any]],
                    triggers: dict[str, list[str]], surveys: list[TaskSurvey]) -> list[str]:
    """What keeps the surveys from being the ones check-plan accepts (its 1.3, 4.2, 4.3
    and 4.4), each with what to add: a triggered task without a survey, a survey with
    fewer than two distinct approaches or none cheaper on the metric that triggered it,
    an approach projecting a constraint the plan does not have."""
    by_task = {s.task_id: s for s in surveys}
    by_id = {t.id: t for t in tasks}
    problems = [p for task_id, why in triggers.items() for p in _task_survey_problems(
        by_id[task_id], why, _survey_metrics(task_id, constraints, rollups, walls),
        by_task.get(task_id))]
    known = {c.id for c in constraints}
    return problems + [
        f"approach {s.task_id}/{a.id} projects {cid}, which is not a constraint of the "
        f"plan: use one of {', '.join(sorted(known))}"
        for s in surveys for a in s.approaches for cid in a.projections if cid not in known]


def _task_survey_problems(task: PlanTask, why: list[str], metrics: list[str],
                          survey: TaskSurvey | None) -> list[str]:
    below = " or ".join(f"{m} {f.estimate(task, m, 'mid'):g}" for m in metrics)
    if survey is None:
        return [f"{task.id} has no survey ({', '.join(why)}): add a survey with task_id "
                f"{task.id} to the survey_approaches proposal, with at least two approaches"
                + (f", one below its mid {below}" if below else "")]
    problems = []
    ids = [a.id for a in survey.approaches]
    if len(set(ids)) < len(ids):
        problems.append(f"the survey of {task.id} gives an approach id twice: give each "
                        "approach its own id")
    if len(set(ids)) < 2 or len({a.title for a in survey.approaches}) < 2:
        problems.append(f"the survey of {task.id} has fewer than two distinct approaches "
                        "(by id and title): add another")
    if not any(_approach_mid(a, m) < f.estimate(task, m, "mid")
               for a in survey.approaches for m in metrics):
        problems.append(f"no approach for {task.id} is below its mid {below or '(none)'}: "
                        "add one that is")
    return problems


def _survey_metrics(task_id: str, constraints: list[PlanConstraint],
                    rollups: list[f.Rollup], walls: list[dict[str, Any]]) -> list[str]:
    """The metrics a survey of the task must improve: those of the walls holding it, or,
    surveyed for its low confidence alone, the cost metric the waterfall shows."""
    metric = {c.id: c.metric for c in constraints}
    held = sorted({m for w in walls if task_id in w["cluster"]
                   if (m := metric.get(w["constraint_id"]))})
    cost = _cost_rollup(rollups)
    return held or ([cost.metric] if cost else [])


def _approach_mid(approach: Approach, metric: str) -> float:
    found = approach.estimates.get(metric)
    return found.mid if found is not None else 0.0


def _unsat_words(rollups: list[f.Rollup]) -> str:
    """Every UNSAT constraint, with its mid total against its limit."""
    unsat = [f"'{r.constraint_id}' mid {r.totals['mid']:g} against {r.op} {r.limit:g}"
             for r in rollups if r.status == "UNSAT"]
    return f"UNSAT as planned: {', '.join(unsat)}" if unsat else "nothing is UNSAT as planned"


def _document(goal: str, run_id: str, constraints: list[PlanConstraint], questions: list[str],
              dag: TaskDag, rollups: list[f.Rollup], claims: list[dict[str, Any]],
              walls: list[dict[str, Any]],
              triggers: dict[str, list[str]], surveys: list[TaskSurvey],
              fixed: f.Repair | None, flags: list[str],
              verifications: list[dict[str, Any]]) -> PlanDocument:
    tasks = dag.tasks
    time_rollup = next((r for r in rollups if r.aggregation == "critical_path"), None)
    cost_rollup = _cost_rollup(rollups)
    document: dict[str, Any] = {
        "schema": SCHEMA, "run_id": run_id, "goal": goal,
        "constraints": [c.model_dump(mode="json") for c in constraints],
        "open_questions": questions,
        "tasks": [t.model_dump(mode="json") for t in tasks],
        "narrative": dag.narrative, "claims": claims,
        "rollup": [r.as_dict() for r in rollups],
        "critical_path": _critical(tasks, time_rollup),
        "waterfall": _waterfall(tasks, cost_rollup),
        "walls": walls,
        "survey": {"triggers": triggers,
                   "surveys": [s.model_dump(mode="json") for s in surveys]},
        "repair": None if fixed is None else _repair_section(fixed, cost_rollup),
        "refusal": None, "flags": flags, "verifications": verifications,
    }
    document["inputs_digest"] = inputs_digest(json.loads(json.dumps(document)))
    return PlanDocument.model_validate(document)


def _cost_rollup(rollups: list[f.Rollup]) -> f.Rollup | None:
    """The rollup a waterfall shows: a summed cost metric, else any summed metric."""
    summed = [r for r in rollups if r.aggregation == "sum"]
    return next((r for r in summed if r.metric.startswith("cost")), None) or \
        next(iter(summed), None)


def _repair_section(fixed: f.Repair, cost_rollup: f.Rollup | None) -> dict[str, Any]:
    """The repaired plan beside the original: its choices, tasks, rollups and views."""
    cost_id = cost_rollup.constraint_id if cost_rollup else None
    return {
        "feasible": fixed.feasible, "chosen": fixed.chosen,
        "tasks": [t.model_dump(mode="json") for t in fixed.tasks],
        "rollup": [r.as_dict() for r in fixed.rollups],
        "critical_path": _critical(fixed.tasks, next(
            (r for r in fixed.rollups if r.aggregation == "critical_path"), None)),
        "waterfall": _waterfall(fixed.tasks, next(
            (r for r in fixed.rollups if cost_id and r.constraint_id == cost_id), None)),
        "cost": fixed.cost, "side_effects": fixed.side_effects,
        "searched": fixed.searched, "combinations": fixed.combinations}


def _critical(tasks: list[PlanTask], r: f.Rollup | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {"constraint_id": r.constraint_id, "metric": r.metric, "tasks": r.path,
            "totals": r.totals}


def _waterfall(tasks: list[PlanTask], r: f.Rollup | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {"constraint_id": r.constraint_id, "metric": r.metric, "limit": r.limit,
            "rows": f.waterfall(tasks, r.metric, r.limit)}
