"""Resolution attempts: the TRY history of a goal, 1..T_max, each with its verification.

Opening an attempt advances the goal's ``attempt_count`` and ``last_attempt_id`` in the
commit that stores it, normally the step's last (the attempt rides it, with the output
and the spend that paid for it); a crash before that commit leaves no trace of it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from kernel.core.budget import Amount, BudgetEnforcer
from kernel.core.envelopes import Attempt, Verification
from kernel.core.goal_node import GoalNode
from kernel.core.run import Run
from kernel.errors import KernelError


class AttemptsExhaustedError(KernelError):
    """The goal already used all max_attempts tries (time to BUILD)."""


def check_outcomes(verification: Verification, methods: Mapping[str, str],
                   ) -> list[dict[str, Any]]:
    """One row per check, as the statements that draw VIOLATED and SATISFIES edges take
    them: the constraint, whether it passed, the method that decided it, its sigma."""
    return [{"constraint_id": c.constraint_id, "passed": c.passed,
             "check": methods.get(c.constraint_id, "unknown"), "sigma": c.sigma_i}
            for c in verification.checks]


def diagnostic_rows(attempt_id: str, verification: Verification) -> list[dict[str, Any]]:
    """The diagnostics its checks report (``detail["diagnostics"]``: severity, file, line,
    code, message), once each, as the Diagnostic nodes of the attempt: ids from the
    attempt and the position, so a replay writes the same."""
    seen: list[dict[str, Any]] = []
    for check in verification.checks:
        found = check.detail.get("diagnostics") if isinstance(check.detail, dict) else None
        for d in found if isinstance(found, list) else []:
            row = {k: d.get(k) for k in ("severity", "file", "line", "code", "message")}
            if row not in seen:
                seen.append(row)
    return [{**row, "id": f"diagnostic:{attempt_id.removeprefix('attempt:')}:{n}",
             "caption": " ".join(str(x) for x in (
                 row["severity"], row["code"],
                 f"{row['file']}:{row['line']}" if row["line"] else row["file"]) if x)}
            for n, row in enumerate(seen, start=1)]


class Attempts:
    def __init__(self, run: Run) -> None:
        self.run = run
        self.store = run.store

    def open(self, goal_id: str, resolver_id: str, *, plan_artifact_id: str | None = None,
             input_artifact_ids: Sequence[str] = (), feedback: dict[str, Any] | None = None,
             ) -> Attempt:
        if self.run.step.pending_attempt is not None:
            self.run.store_pending()  # one pending attempt at a time
        attempt = self.next(goal_id, resolver_id, plan_artifact_id=plan_artifact_id,
                            input_artifact_ids=input_artifact_ids, feedback=feedback)
        index = attempt.attempt_index
        props = {
            "id": attempt.id, "goal_id": goal_id, "attempt_index": index,
            "resolver_id": resolver_id, "plan_artifact_id": plan_artifact_id,
            "input_artifact_ids": list(input_artifact_ids),
            "feedback": json.dumps(feedback, sort_keys=True) if feedback is not None else None,
            "cost": 0, "time": 0, "seq": self.run.seq,
            "caption": f"attempt {index}",  # its FOR edge shows which goal
        }
        # Stored by the run's next commit on this goal (the step's transition, say).
        self.run.step.pending_attempt = {"goal_id": goal_id, "params": {
            "id": attempt.id, "attempt_index": index, "resolver_id": resolver_id,
            "props": {k: v for k, v in props.items() if v is not None}}}
        return attempt

    def next(self, goal_id: str, resolver_id: str, *, plan_artifact_id: str | None = None,
             input_artifact_ids: Sequence[str] = (), feedback: dict[str, Any] | None = None,
             ) -> Attempt:
        """The attempt ``open`` would open now; nothing is written or buffered."""
        goal = self.store.run("goal/get", {"goal_id": goal_id})[0]["view"]["goal"]
        index = int(goal["attempt_count"]) + 1
        if index > int(goal["max_attempts"]):
            raise AttemptsExhaustedError(
                f"{goal_id} has used all {goal['max_attempts']} attempts")
        return Attempt(id=self.run.rider_id("attempt"), node_id=goal_id,
                       attempt_index=index, resolver_id=resolver_id,
                       plan_artifact_id=plan_artifact_id,
                       input_artifact_ids=list(input_artifact_ids), feedback=feedback)

    def record_output(self, attempt: Attempt, output_artifact_id: str | None,
                      spent: Amount) -> None:
        """The resolver's output and the spend that paid for it, stored together by the
        run's next commit (see BudgetEnforcer.record)."""
        BudgetEnforcer(self.run).record(
            attempt.node_id, spent, attempt.resolver_id, "resolve", attempt_id=attempt.id,
            output_artifact_id=output_artifact_id)

    def record_verification(self, attempt: Attempt, verification: Verification,
                            methods: Mapping[str, str] | None = None,
                            diagnosed: tuple[str, str] | None = None,
                            sigma_paths: Sequence[Mapping[str, Any]] = (),
                            ride: bool = False) -> None:
        """The verification, with an edge per check (VIOLATED or SATISFIES) naming the
        method in ``methods`` that decided it, a cause a check ``diagnosed`` itself as
        ``(name, description)``, and the ``sigma_paths`` it changes (see
        ``Confidence.subtree_sigmas``). It is stored now, carrying the step's spend, or,
        with ``ride``, by the step's move of the goal (``StepBuffer.pending_verification``)."""
        name, description = diagnosed if diagnosed and verification.verdict == "UNSAT" \
            else (None, None)
        if self.run.step.pending_verification is not None:
            self.run.store_pending()  # one verification at a time
        self.run.step.pending_verification = {
            "goal_id": attempt.node_id, "proposals": self.run.proposals,
            "what": f"record the verification of {attempt.id}", "params": {
                "attempt_id": attempt.id, "verification": verification.model_dump_json(),
                "verdict": verification.verdict, "sigma_v": verification.sigma_v,
                "failure_mode": f"failure:{name}" if name else None, "failure_slug": name,
                "failure_description": description,
                "outcomes": check_outcomes(verification, methods or {}),
                "diagnostics": diagnostic_rows(attempt.id, verification),
                "sigma_paths": [dict(row) for row in sigma_paths]}}
        if not ride:
            self.run.store_pending()

    def tried(self, goal: GoalNode) -> list[Attempt]:
        """``of_goal`` for a goal read this step: one that never opened an attempt
        (``attempt_count`` 0) has none stored, so nothing is read."""
        return self.of_goal(goal.id) if goal.attempt_count else []

    def of_goal(self, goal_id: str) -> list[Attempt]:
        out = []
        for row in self.store.run("attempt/of_goal", {"goal_id": goal_id}):
            a = row["attempt"]
            out.append(Attempt(
                id=a["id"], node_id=a["goal_id"], attempt_index=a["attempt_index"],
                resolver_id=a["resolver_id"], plan_artifact_id=a.get("plan_artifact_id"),
                input_artifact_ids=a.get("input_artifact_ids") or [],
                output_artifact_id=a.get("output_artifact_id"),
                feedback=json.loads(a["feedback"]) if a.get("feedback") else None,
                verification=Verification.model_validate_json(a["verification"])
                if a.get("verification") else None,
                verdict=a.get("verdict"), sigma_v=a.get("sigma_v"),
                failure_mode=a.get("failure_mode"), cost_micros=a.get("cost", 0),
                time_ms=a.get("time", 0), weighed=bool(a.get("weighed"))))
        return out
