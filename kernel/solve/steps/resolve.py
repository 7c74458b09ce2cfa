"""Step 5, resolve: one TRY attempt, its output and spend written together."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from kernel.core.envelopes import Attempt, Lineage, ToolPlan
from kernel.core.goal_node import GoalNode
from kernel.kg.context import StepHistory
from kernel.proposals import Proposal
from kernel.protocol import ResolveRequest
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.solve import moves, prompt_inputs
from kernel.solve.effects import (
    Done,
    Effects,
    Flow,
    ModelCall,
    NewArtifact,
    OpenAttempt,
    Pay,
    Request,
    StepChanges,
    Tool,
    Transition,
    Wake,
)
from kernel.solve.output_view import output_view
from kernel.solve.steps._shared import S, request_for
from kernel.solve.view import StepView


def resolve(view: StepView, move: moves.Resolve) -> Effects[list[str] | moves.Grow]:
    """An attempt (1..T_max); proposal `resolve` with the feedback of the last failure and
    that attempt's output, under the code contract or, for a goal no test or tool check
    decides, the document contract; output artifact, attempt and spend written together;
    with no tries left, BUILD."""
    goal = view.goal(move.goal.id)
    plan = view.tool_plan(goal.require("plan_artifact_id"))
    history = view.tried(goal)
    if history and history[-1].verdict is None and history[-1].output_artifact_id:
        # a crash came after the output was paid for
        return Done([goal.id], StepChanges((Wake((goal.id,)), Transition(goal.id, S.VERIFYING))))
    if history and history[-1].verdict is None:  # opened before a crash: continued
        attempt = history[-1]
    elif goal.attempt_count >= goal.max_attempts:
        return Done(moves.Grow(goal))
    else:
        attempt = yield OpenAttempt(goal.id, plan.final_resolver_id, goal.plan_artifact_id,
                                    tuple(goal.input_artifact_ids), goal.feedback)
    request, proposal = yield from _calls(view, goal, plan, history)
    output: models.ResolutionOutput = proposal.output
    selected = [c.id for c in request.constraints]
    made = NewArtifact(
        goal.id, output.model_dump_json(), output.artifact_type, "json",
        Lineage(node_id=goal.id, resolver_id=plan.final_resolver_id, constraint_ids=selected,
                input_artifact_ids=request.input_artifact_ids),
        key=f"proposal:{proposal.ledger_hash}", unseen=not proposal.replayed,
        metadata=(("content_format", output.format), ("ledger_index", proposal.ledger_index)))
    return Done([goal.id], StepChanges((
        Pay(goal.id, proposal.cost_usd, proposal.seconds, plan.final_resolver_id, "resolve",
            proposal.ledger_hash, proposal.replayed, attempt.id, made),
        Wake((goal.id,)),
        Transition(goal.id, S.VERIFYING),
        Flow(goal.id, f"RESOLVE using {plan.final_resolver_id} "
                      f"(attempt {attempt.attempt_index})"))))


def _calls(view: StepView, goal: GoalNode, plan: ToolPlan, history: list[Attempt],
           ) -> Generator[Request, Any, tuple[ResolveRequest, Proposal[Any]]]:
    """The plan's calls, in order, each step's output handed to the next (earlier steps
    are paid as they run, each answered by its own tool); the last one's request and
    proposal, which the attempt's output and spend are."""
    selected = view.constraints(view.roles(goal.id)["selected"])
    past = StepHistory.model_validate((yield view.history(goal, "resolve")))
    context = past.block(goal.summary, view.config.context_chars)
    inputs = view.dependency_inputs(goal)
    ids = [*goal.input_artifact_ids, *(i["artifact_id"] for i in inputs)]
    contract = prompt_inputs.sandbox_contract(view.policy, selected, dependencies=bool(inputs),
                                              document=prompt_inputs.is_document(goal, selected),
                                              repository=view.in_repository)
    inherited = view.inherited(goal)
    repository = {"repository": view.repository(goal)} if view.in_repository else {}
    last = view.last_output(history)

    def step_request(given: list[dict[str, Any]]) -> ResolveRequest:
        return request_for(goal, ops.RESOLVE, selected, context, feedback=goal.feedback,
                           input_artifact_ids=ids, inputs=given, sandbox=contract,
                           inherited=inherited, last_output=last, **repository)

    for number, step in enumerate(plan.steps[:-1], 1):
        done: Proposal[Any] = yield ModelCall(ops.RESOLVE, step_request(inputs),
                                              resolver_id=step.resolver_id,
                                              answerer=Tool(step.resolver_id))
        inputs = [*inputs, {"from_step": number, "resolver_id": step.resolver_id,
                            "output": output_view(done.output)}]
    request = step_request(inputs)
    proposal: Proposal[Any] = yield ModelCall(ops.RESOLVE, request,
                                              resolver_id=plan.final_resolver_id, pay=False,
                                              answerer=Tool(plan.final_resolver_id))
    return request, proposal
