"""Step 5, resolve: one TRY attempt, its output and spend written together."""

from __future__ import annotations

from typing import Any

from kernel.core.envelopes import (
    Lineage,
    ToolPlan,
)
from kernel.core.goal_node import GoalNode
from kernel.kg import context as kg_context
from kernel.protocol import ResolveRequest
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.runtime.gate import amount, ask
from kernel.runtime.kernel import Kernel
from kernel.solve import moves, prompt_inputs, repo_goal
from kernel.solve.output_view import output_view
from kernel.solve.steps._shared import (
    S,
    constraints_of,
    enter,
    request_for,
)
from kernel.solve.tools import runner_for


def resolve(k: Kernel, move: moves.Resolve) -> list[str] | moves.Grow:
    """An attempt (1..T_max); proposal `resolve` with the feedback of the last failure and
    that attempt's output, under the code contract or, for a goal no test or tool check
    decides, the document contract; output artifact, attempt and spend written together;
    with no tries left, BUILD."""
    goal_id = move.goal.id
    goal = enter(k, goal_id, S.RESOLVING)
    plan = ToolPlan.model_validate_json(k.artifacts.read(goal.require("plan_artifact_id")))
    history = k.attempts.tried(goal)
    if history and history[-1].verdict is None and history[-1].output_artifact_id:
        k.run.will_wake([goal_id])
        k.tree.transition(goal_id, S.VERIFYING)  # a crash came after the output was paid for
        return [goal_id]
    opened = _open_attempt(k, goal, plan)
    if opened is None:
        return moves.Grow(goal)
    attempt, index = opened
    selected = constraints_of(k, goal_id, "selected")
    _, context = kg_context.block(k, goal, "resolve")
    inputs = prompt_inputs.dependency_inputs(k, goal)
    ids = [*goal.input_artifact_ids, *(i["artifact_id"] for i in inputs)]
    contract = prompt_inputs.sandbox_contract(k.policy, selected, dependencies=bool(inputs),
                                              document=prompt_inputs.is_document(goal, selected),
                                              repository=k.repo is not None)
    inherited = prompt_inputs.inherited_view(k, goal)
    repository = {"repository": repo_goal.prompt_section(k, goal)} if k.repo else {}
    last = prompt_inputs.last_output(k, history)

    def step_request(given: list[dict[str, Any]]) -> ResolveRequest:
        return request_for(goal, ops.RESOLVE, selected, context, feedback=goal.feedback,
                           input_artifact_ids=ids, inputs=given, sandbox=contract,
                           inherited=inherited, last_output=last, **repository)

    # A plan of several steps runs them in order, each one's output handed to the next;
    # the last one's output is the attempt's (earlier steps are paid as they run).
    for number, step in enumerate(plan.steps[:-1], 1):
        done = ask(k, goal_id, ops.RESOLVE, step_request(inputs), resolver_id=step.resolver_id,
                   proposer=runner_for(k, step.resolver_id))
        inputs = [*inputs, {"from_step": number, "resolver_id": step.resolver_id,
                            "output": output_view(done.output)}]
    request = step_request(inputs)
    proposal = ask(k, goal_id, ops.RESOLVE, request, resolver_id=plan.final_resolver_id, pay=False,
                   proposer=runner_for(k, plan.final_resolver_id))
    output: models.ResolutionOutput = proposal.output
    artifact = k.artifacts.register(
        goal_id, output.model_dump_json(), type=output.artifact_type, format="json",
        metadata={"content_format": output.format, "ledger_index": proposal.ledger_index},
        lineage=Lineage(node_id=goal_id, resolver_id=plan.final_resolver_id,
                        constraint_ids=[c.id for c in selected],
                        input_artifact_ids=request.input_artifact_ids),
        key=f"proposal:{proposal.ledger_hash}", unseen=not proposal.replayed)
    k.budget.record(goal_id, amount(proposal.cost_usd, proposal.seconds), plan.final_resolver_id,
                    "resolve", attempt_id=attempt, output_artifact_id=artifact.id,
                    proposal=proposal.ledger_hash, replayed=proposal.replayed)
    k.run.will_wake([goal_id])
    k.tree.transition(goal_id, S.VERIFYING)
    k.log.flow(goal_id, f"RESOLVE using {plan.final_resolver_id} (attempt {index})")
    return [goal_id]


def _open_attempt(k: Kernel, goal: GoalNode, plan: ToolPlan) -> tuple[str, int] | None:
    """(id, index) of the attempt a crash interrupted, or of the next one (None: exhausted)."""
    history = k.attempts.tried(goal)
    if history and history[-1].verdict is None and history[-1].output_artifact_id is None:
        return history[-1].id, history[-1].attempt_index
    if goal.attempt_count >= goal.max_attempts:
        return None
    attempt = k.attempts.open(goal.id, plan.final_resolver_id,
                              plan_artifact_id=goal.plan_artifact_id,
                              input_artifact_ids=goal.input_artifact_ids,
                              feedback=goal.feedback)
    return attempt.id, attempt.attempt_index
