"""The one place a step's effects happen: its requests performed, its changes committed.

A step written as an effect producer (``kernel.solve.effects``) yields requests and
returns its changes; ``drive`` runs it on its turn. Each ``ModelCall`` goes through the
budget gate (``kernel.runtime.gate.ask``: estimate, pre-check, a denial escalated to
HIRE by dispatch, the spend recorded) and ``Proposals``, which records it in the ledger
or serves it from there on resume and replay; each ``Recall`` is recorded the same way,
and so is a person's answer to a ``HireQuestion`` (None when nobody answers yet).
Then the step's changes are applied in order, which makes its commit (what is pending
rides the statement that takes it, see ``kernel.core.run``).

``first_request`` is the other way to drive a step: ahead of its turn, up to its first
request and no further (``kernel.solve.lookahead`` starts that request's call).
"""

from __future__ import annotations

from typing import Any, TypeVar

from kernel.core.artifacts import Artifacts
from kernel.core.attempts import Attempts
from kernel.core.budget import BudgetEnforcer
from kernel.core.confidence import Confidence
from kernel.core.constraints import ConstraintEngine
from kernel.core.dag import Dependencies
from kernel.core.envelopes import Artifact
from kernel.core.goal_node import GoalChanges
from kernel.core.goals import Decomposed, GoalTree
from kernel.core.logs import TieredLog
from kernel.core.run import Run
from kernel.proposals import Proposal
from kernel.protocol import Operation, Proposer
from kernel.protocol import operations as ops
from kernel.protocol.errors import Parked
from kernel.protocol.resolver_ids import HUMAN_ID
from kernel.refusal import refuse
from kernel.repositories import candidates as weighing
from kernel.repositories import goals, requests
from kernel.repositories.requests import INTAKE_TAG
from kernel.runtime import progress
from kernel.runtime.gate import amount, ask
from kernel.runtime.installed import resolvers
from kernel.runtime.kernel import Kernel
from kernel.solve import moves
from kernel.solve.effects import (
    AddDependencies,
    AddRoles,
    AllocateChildren,
    Answerer,
    AskPerson,
    ChildIds,
    ConfirmIntake,
    Decision,
    DeclineRequest,
    Decomposition,
    Done,
    Effects,
    Flow,
    GrantBudget,
    HireQuestion,
    ModelCall,
    NewArtifact,
    NewChild,
    NewChildren,
    NewId,
    Observe,
    OpenAttempt,
    OpenRequest,
    Pay,
    Progress,
    Recall,
    RecordCause,
    RecordVerification,
    Refusal,
    RefuseGoal,
    Register,
    RegisterTool,
    Reopen,
    Request,
    Sandbox,
    SetRole,
    SetSigmaPaths,
    StepChanges,
    StoreConstraints,
    StoreVerification,
    Transition,
    UpdateGoal,
    Wake,
    Weigh,
)
from kernel.solve.sandbox_runs import SandboxProposer
from kernel.solve.tools import ToolShelf, register, runner_for

N = TypeVar("N")


def drive(k: Kernel, body: Effects[N]) -> N:
    """Take a step on its turn: perform each request it yields, send it the result, and
    commit the changes it returns; what follows it (a move given its goal as the commit
    left it, when the step asks for that)."""
    try:
        request = next(body)
        while True:
            request = body.send(perform(k, request))
    except StopIteration as stop:
        done: Done[N] = stop.value
    finally:
        body.close()  # a request that raised (a denial, a failed call) ends the body
    apply(k, done.changes)
    if done.reread and isinstance(done.then, moves.Move):
        then: N = done.then.as_committed(k.tree.get(done.then.goal.id))  # type: ignore[assignment]
        return then
    return done.then


def perform(k: Kernel, request: Request) -> Any:
    """The result of one request, on the step's turn."""
    if isinstance(request, ModelCall):
        return ask(k, request.goal_id, request.operation, request.request,
                   resolver_id=request.resolver_id, pay=request.pay,
                   proposer=proposer_of(k, request.answerer))
    if isinstance(request, Observe):
        return k.proposals.observe(request.name, request.goal_id, request.read, request.source)
    if isinstance(request, Register):
        return _register(k.artifacts, request.artifact)
    if isinstance(request, OpenAttempt):
        return k.attempts.open(request.goal_id, request.resolver_id,
                               plan_artifact_id=request.plan_artifact_id,
                               input_artifact_ids=request.input_artifact_ids,
                               feedback=request.feedback)
    if isinstance(request, ChildIds | NewChildren):
        return _children(k.run, k.tree, k.log, request)
    if isinstance(request, AskPerson | HireQuestion):
        return _ask_person(k, request)
    if isinstance(request, NewChild):
        return _new_child(k.tree, k.constraints, k.log, request)
    if isinstance(request, NewId):
        return k.run.new_id(request.kind), k.run.seq
    return k.proposals.recall(request.name, request.goal_id, request.read)


def _ask_person(k: Kernel, question: AskPerson | HireQuestion) -> Proposal[Any] | None:
    """A person's answer, recorded in the ledger like a call: to an intake question (the
    answer stored on its request, or given now by the terminal or the script's person)
    or to a HIRE request; None when nobody is there to give it."""
    if isinstance(question, HireQuestion):
        operation: Operation[Any] = ops.HIRE
        person = resolvers().hire_human(k.run, k.human_prompt)
    else:
        for line in question.told:
            _tell(k.log, line)
        proposer = k.proposals.proposer
        operation = ops.INTAKE
        person = resolvers().intake_human(
            k.run, k.human_prompt or (proposer.person if proposer is not None else None))
    try:
        return ask(k, question.request.goal_id, operation, question.request,
                   resolver_id=HUMAN_ID, proposer=person)
    except Parked:
        return None


def _children(run: Run, tree: GoalTree, log: TieredLog,
              request: ChildIds | NewChildren) -> list[str]:
    """The ids of the children a decomposition makes: taken once what cannot ride the
    commit that creates them is stored, or as they are created now."""
    if isinstance(request, ChildIds):
        run.store_pending(keep_spend_of=request.goal_id)
        return tree.child_ids(request.count)
    if request.told is not None:
        _tell(log, request.told)
    return tree.create_children(request.parent, list(request.children), request.inherited,
                                  coupling={key: list(ids) for key, ids in request.coupling})


def _new_child(tree: GoalTree, constraints: ConstraintEngine, log: TieredLog,
               request: NewChild) -> str:
    """One child made now (a build subgoal), once what is told before it is logged and
    the constraints it answers for are stored."""
    for line in request.told:
        _tell(log, line)
    core = constraints.upsert(request.core)
    return tree.create_child(request.parent_id, request.spec, core_ids=core,
                               decomposition_key=request.key)


def _decompose(tree: GoalTree, deps: Dependencies, budget: BudgetEnforcer,
               change: Decomposition | AddDependencies | AllocateChildren) -> None:
    """A fresh decomposition's one commit (its budgets split from what the parent holds
    now), or dependencies or budgets added beside children already made."""
    if isinstance(change, AddDependencies):
        deps.add(tree.run, change.goal_id, list(change.edges))
        return
    if isinstance(change, AllocateChildren):
        budget.allocate_children(change.goal_id, dict(change.weights), share=change.share)
        return
    parent = change.parent.id
    grants = budget.grants_to_children(parent, budget.remaining(parent), dict(change.weights))
    made = tree.create_children(
        change.parent, list(change.children), change.inherited,
        Decomposed(list(change.edges), grants, change.to, change.changes),
        coupling={key: list(ids) for key, ids in change.coupling})
    if made != list(change.ids):
        raise AssertionError(f"children of {parent} made as {made}, taken as {change.ids}")


def proposer_of(k: Kernel, answerer: Answerer | None) -> Proposer | None:
    """Who answers a call: the sandbox, a registered tool's runner, or (None) the run's
    model."""
    if answerer is None:
        return None
    if isinstance(answerer, Sandbox):
        return SandboxProposer(k)
    return runner_for(k, answerer.resolver_id)


def _register(artifacts: Artifacts, made: NewArtifact) -> Artifact:
    return artifacts.register(made.goal_id, made.content, type=made.type, format=made.format,
                                lineage=made.lineage, metadata=dict(made.metadata) or None,
                                sigma=made.sigma, key=made.key, unseen=made.unseen)


def apply(k: Kernel, changes: StepChanges) -> None:
    """Write a step's changes, in order."""
    for change in changes.changes:
        if isinstance(change, Wake):
            k.run.will_wake(list(change.goal_ids))
        elif isinstance(change, Transition):
            k.tree.transition(change.goal_id, change.to, _with_made(k.artifacts, change))
        elif isinstance(change, UpdateGoal):
            k.tree.update(change.goal_id, change.status, change.changes)
        elif isinstance(change, StoreConstraints):
            k.constraints.upsert(change.specs, ride=k.run if change.ride else None)
        elif isinstance(change, AddRoles):
            k.constraints.add_roles(k.run, change.goal_id, {r: list(ids) for r, ids in change.roles})
        elif isinstance(change, SetRole):
            k.constraints.set_role(k.run, change.goal_id, change.role, change.ids,
                                   change.from_status, change.to, change.changes,
                                   change.pattern, change.capabilities)
        elif isinstance(change, Flow | Decision):
            _tell(k.log, change)
        elif isinstance(change, Progress):
            progress.report(change.kind, change.text, change.goal_id, change.summary)
        elif isinstance(change, Reopen):
            _reopen(k.tree, k.log, change)
        elif isinstance(change, Decomposition | AddDependencies | AllocateChildren):
            _decompose(k.tree, k.deps, k.budget, change)
        elif isinstance(change, RecordCause):
            k.failures.store(change.attempt_id, change.cause)
        elif isinstance(change, StoreVerification):
            k.run.store_verification()
        elif isinstance(change, RecordVerification | SetSigmaPaths | Weigh):
            _record(k.attempts, k.confidence, change)
        elif isinstance(change, Pay):
            _pay(k.artifacts, k.budget, change)
        elif isinstance(change, Refusal | RefuseGoal):
            _refuse(k, change)
        elif isinstance(change, ConfirmIntake):
            _confirm_intake(k.run, change)
        else:
            _hire(k, change)


def _refuse(k: Kernel, change: Refusal | RefuseGoal) -> None:
    """A refusal recorded in the ledger; with ``RefuseGoal``, the goal made infeasible."""
    facts: dict[str, Any] = dict(change.facts)
    if isinstance(change, Refusal):
        refuse(k.ledger, change.goal_id, change.reason, change.detail, **facts)
    else:
        k.refuse_goal(change.goal, change.reason, change.detail, **facts)


def _reopen(tree: GoalTree, log: TieredLog, change: Reopen) -> None:
    """A backtrack to the goal, told after it with what it invalidated."""
    invalidated = tree.reopen(change.goal_id, change.to, change.changes)
    if change.told is not None:
        _tell(log, change.told, f"; {invalidated.said()}")


def _hire(shelf: ToolShelf,
          change: OpenRequest | DeclineRequest | GrantBudget | RegisterTool) -> None:
    """A capability request raised or joined, or its answer applied, in one commit."""
    if isinstance(change, OpenRequest):
        requests.open_request(shelf.run, {
            "goal_id": change.goal_id, "from": change.from_status.value,
            "to": change.to.value, "changes": change.changes.to_properties(),
            "fingerprint": change.fingerprint, "capability_tag": change.capability_tag,
            "props": dict(change.props), "supersede": change.supersede,
        }, what=f"park {change.goal_id} on a HIRE request")
    elif isinstance(change, DeclineRequest):
        requests.decline(shelf.run, {"goal_id": change.goal_id, "status": change.status.value,
                                 "request_id": change.request_id, "answer": change.answer},
                         what=f"decline {change.request_id}")
    elif isinstance(change, GrantBudget):
        requests.add_budget(shelf.run, {
            "goal_id": change.goal_id, "status": change.status.value,
            "request_id": change.request_id, "answer": change.answer, "cost": change.cost,
            "time": change.time, "event_id": change.event_id,
            "changes": change.changes.to_properties(),
        }, what=f"add the budget {change.request_id} was answered with")
    else:
        register(shelf, change.tool, resolver_id=change.resolver_id, goal=change.goal,
                 builder_id=change.builder_id, lineage_inputs=list(change.lineage_inputs),
                 replaces=list(change.replaces), goal_changes=change.goal_changes,
                 request_id=change.request_id, key=change.key)


def _record(attempts: Attempts, confidence: Confidence,
            change: RecordVerification | SetSigmaPaths | Weigh) -> None:
    """A verification, sigma_path values or a weighing, recorded."""
    if isinstance(change, RecordVerification):
        attempts.record_verification(
            change.attempt, change.verification, dict(change.methods),
            diagnosed=change.diagnosed, sigma_paths=change.sigma_paths, ride=change.ride)
    elif isinstance(change, SetSigmaPaths):
        confidence.store_sigma_paths(change.goal_id, list(change.rows))
    else:
        weighing.weigh(attempts.run, {
            "attempt_id": change.attempt_id, "chosen_id": change.chosen_id,
            "chosen_kind": change.chosen_kind, "candidates": list(change.candidates),
        }, what=f"weigh the candidates of {change.attempt_id}")


def _pay(artifacts: Artifacts, budget: BudgetEnforcer, pay: Pay) -> None:
    """A call's spend, with the attempt it paid for and its output, registered first."""
    output = None if pay.output is None else _register(artifacts, pay.output).id
    budget.record(pay.goal_id, amount(pay.cost_usd, pay.seconds), pay.resolver_id,
                    pay.operation, attempt_id=pay.attempt_id, output_artifact_id=output,
                    proposal=pay.proposal, replayed=pay.replayed)


def _confirm_intake(run: Run, change: ConfirmIntake) -> None:
    goals.confirm_intake(run, {
        "goal_id": change.goal_id, "core_ids": list(change.core_ids), "intake_tag": INTAKE_TAG,
        "changes": dict(change.properties)}, what=f"confirm the goal of {change.goal_id}")


def _with_made(artifacts: Artifacts, transition: Transition) -> GoalChanges | None:
    """The transition's changes, led by the ids of the artifacts it registers first."""
    if not transition.made:
        return transition.changes
    ids = {}
    for name, made in transition.made:
        ids[name] = _register(artifacts, made).id
    named = GoalChanges.model_validate(ids)
    return named if transition.changes is None else named | transition.changes


def _tell(log: TieredLog, line: Flow | Decision, then: str = "") -> None:
    """A log line (``then`` added to its text or rationale)."""
    if isinstance(line, Flow):
        log.flow(line.goal_id, line.text + then)
    else:
        log.decision(line.goal_id, line.decision, candidates=list(line.candidates),
                     chosen=line.chosen, rationale=line.rationale + then, **dict(line.extra))


def first_request(body: Effects[N], answer: Any = None) -> Request | Done[N]:
    """Advance a step (sent ``answer`` if it is under way) to its next request, or to its
    end when it asks for nothing more; nothing is performed or applied."""
    try:
        return body.send(answer)
    except StopIteration as stop:
        done: Done[N] = stop.value
        return done


__all__ = ["Recall", "apply", "drive", "first_request", "perform", "proposer_of"]
