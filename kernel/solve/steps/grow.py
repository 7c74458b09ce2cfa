"""Step 10, BUILD, and the way into step 11, HIRE: what happens when TRY is exhausted
or no registered tool provides what a goal needs.

1. Gap detection: the capability the goal lacks (a proposal; none is needed when
   resolver selection already knows which capability no tool provides).
2. Lookup before build (B4, mandatory): a registered tool that provides it and has not
   already failed on this goal is used instead; an earlier failed build of the same
   capability, in any run, means the kernel does not build it again.
3. BUILD: a build subgoal, solved by the same loop with half the goal's remaining
   budget; its verified output is registered as a new tool (``built_by`` the resolver
   that wrote it, ``replaced_by`` from the tools that failed, ``composed_of`` its steps
   when it is a composite) and the goal tries again with it.
4. Otherwise HIRE (see ``hire``).

Both steps read through the view and ask the loop for what they need: the gap's call,
the histories and the self-model's answer they decide on (recorded in the ledger), the
build subgoal (created when its id is needed); the goal's move and the tool's
registration are changes the loop commits.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from fractions import Fraction
from typing import Any

from pydantic import ValidationError

from kernel.core.budget import Amount
from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.goals import GoalSpec
from kernel.core.registry import Candidate
from kernel.core.state_machine import Status
from kernel.kg.context import StepHistory
from kernel.kg.history import BuildLookup
from kernel.protocol import ToolDefinition
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.protocol.resolver_ids import SELF_MODEL_ID
from kernel.protocol.self_model import BuildOutlook
from kernel.runtime.gate import CLAUDE_ID
from kernel.solve import moves, prompt_inputs
from kernel.solve.capability_requests import budget_class, request_fingerprint, resumed, retried
from kernel.solve.effects import (
    AllocateChildren,
    Decision,
    Done,
    Effects,
    Flow,
    ModelCall,
    NewChild,
    Observe,
    RegisterTool,
    Request,
    StepChanges,
    StoreConstraints,
    Transition,
)
from kernel.solve.steps._shared import NOT_RESOLVERS, request_for, settled_specs
from kernel.solve.view import OUTLOOK, StepView

S = Status
BUILD_SHARE = Fraction(1, 2)  # of the goal's remaining budget, as in the design
# The static check and the run() contract, checked deterministically on every build.
TOOL_CONTRACT = ConstraintSpec(
    type="logic", domain="software", title="the tool passes the static check and defines run()",
    payload={"check": "tool_contract"}, provenance=Provenance(source="derived"))

__all__ = ["BUILD_SHARE", "OUTLOOK", "TOOL_CONTRACT", "grow", "on_build_done"]


def grow(view: StepView, move: moves.Grow) -> Effects[list[str] | moves.Hire]:
    """Proposal `detect_capability_gap` (none when selection already knows the missing
    capability); the mandatory lookup-before-build (`cypher/grow/lookup_before_build`:
    tools providing it, earlier builds of it in any run, earlier requests); the
    self-model's answer whether the kernel can build it (`cypher/self_model/build_outlook`,
    a ledger observation); a build subgoal solved by the same loop with half the remaining
    budget, or HIRE."""
    # TRY is exhausted (the goal is verifying) or selection found no tool for ``missing``
    # (the goal is selecting a resolver).
    goal, missing = move.goal, move.missing
    changes = move.changes or GoalChanges()
    tried = sorted({a.resolver_id for a in view.tried(goal)})
    if missing is not None:
        gap = models.CapabilityGap(capability_tag=missing, buildable=True,
                                   rationale=f"no registered tool provides '{missing}'")
    else:
        gap = yield from _detect(view, goal, tried, changes)
    record = gap_record(goal, gap, view.cost_left(goal.id))
    found, looked_up = lookup_before_build(goal, gap.capability_tag, tried,
                                           view.build_lookup(gap.capability_tag),
                                           view.candidates([gap.capability_tag], goal.modality))
    if found["tool"] is not None:
        return Done([goal.id], StepChanges((
            looked_up, retried(goal, changes | resumed(goal, record, retry=True)),
            Flow(goal.id, f"lookup before build: {found['tool']} provides "
                          f"'{gap.capability_tag}'; no build needed"))))
    told: tuple[Decision, ...] = (looked_up,)
    reason = _why_not_build(goal, gap, found)
    if reason is None:
        outlook = yield from self_model_outlook(view, goal, gap.capability_tag)
        told += (outlook_decision(goal.id, outlook),)
        reason = outlook.reason
    if reason is not None:
        return Done(moves.Hire(goal, record, reason, S.PENDING, changes), StepChanges(told))
    return (yield from _build(view, goal, gap, record, changes, told))


def _detect(view: StepView, goal: GoalNode, tried: list[str], changes: GoalChanges,
            ) -> Generator[Request, Any, models.CapabilityGap]:
    """The capability the goal lacks, as the model sees it from the goal's history, the
    tools that failed it and the capabilities registered."""
    past = StepHistory.model_validate((yield view.history(goal, "gap")))
    context = past.block(goal.summary, view.config.context_chars)
    selected = view.constraints(view.roles(goal.id)["selected"])
    capabilities = yield Observe("capabilities", goal.id,
                                 lambda: registered_capabilities(view.registered()))
    proposal = yield ModelCall(ops.DETECT_CAPABILITY_GAP, request_for(
        goal, ops.DETECT_CAPABILITY_GAP, selected, context, tried_resolvers=tried,
        failures=changes.feedback or goal.feedback, capabilities=capabilities,
        sandbox="\n".join(prompt_inputs.sandbox_limits(view.policy))))
    gap: models.CapabilityGap = proposal.output
    return gap


def registered_capabilities(registered: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each capability tag with the tools that provide it (what a gap is measured
    against), from the registry's rows."""
    tags: dict[str, list[str]] = {}
    for row in registered:
        for tag in row["capabilities"]:
            tags.setdefault(tag, []).append(row["id"])
    return {tag: sorted(ids) for tag, ids in sorted(tags.items())}


def gap_record(goal: GoalNode, gap: models.CapabilityGap, cost_left: int) -> dict[str, Any]:
    """The gap as stored on the goal and fingerprinted for HIRE (its budget class from
    what the goal has left, ``cost_left`` micro-dollars)."""
    constraints = [c.model_dump(mode="json", include={"type", "domain", "title", "payload"})
                   for c in gap.build_constraints]
    cls = budget_class(cost_left)
    return {"capability_tag": gap.capability_tag, "build_constraints": constraints,
            "buildable": gap.buildable, "rationale": gap.rationale, "budget_class": cls,
            "fingerprint": request_fingerprint(gap.capability_tag, constraints, cls)}


def lookup_before_build(goal: GoalNode, tag: str, tried: list[str], found: BuildLookup,
                        providers: list[Candidate]) -> tuple[dict[str, Any], Decision]:
    """What the registry and the history say of ``tag`` (``found``, and the ``providers``
    registered for it, best first), and the decision that records it: the tool chosen is
    the best-ranked one that has not been tried on this goal."""
    usable = [c for c in providers if c.id not in tried and c.id not in NOT_RESOLVERS]
    failed_builds = sorted(b["id"] for b in found.builds if b["status"] == "infeasible")
    result: dict[str, Any] = {"tool": usable[0].id if usable else None,
                              "failed_builds": failed_builds,
                              "tools": sorted(t["id"] for t in found.tools),
                              "requests": sorted(r["id"] for r in found.requests)}
    return result, Decision(goal.id, "lookup_before_build", tuple(result["tools"]),
                            result["tool"], "registry capability match, then history", (
                                ("capability", tag), ("tried", tried),
                                ("failed_builds", failed_builds),
                                ("requests", result["requests"])))


def _why_not_build(goal: GoalNode, gap: models.CapabilityGap,
                   found: dict[str, Any]) -> str | None:
    """Why the kernel does not build, before it asks the self-model (None: ask it)."""
    if not gap.buildable:
        return "not_buildable"
    if found["failed_builds"]:
        return "build_failed_before"
    if goal.purpose == "build":
        return "build_needs_a_tool"  # builds do not recurse: a human supplies the part
    return None


def self_model_outlook(view: StepView, goal: GoalNode, tag: str,
                       ) -> Generator[Request, Any, BuildOutlook]:
    """The self-model's answer to "can the kernel itself build this?", recorded in the
    ledger before it decides (it reads the whole graph's build history, so a resume or
    a replay is served the recorded answer)."""
    left = view.budget_left(goal.id)
    share = Amount(int(left.cost * BUILD_SHARE), int(left.time * BUILD_SHARE))
    return BuildOutlook.model_validate((yield view.build_outlook(goal, tag, share)))


def outlook_decision(goal_id: str, outlook: BuildOutlook) -> Decision:
    """The self-model's answer as the goal's log records it."""
    return Decision(goal_id, "self_model", tuple(outlook.builders),
                    "build" if outlook.can_build else "hire",
                    outlook.reason or "the kernel can build it within half its budget",
                    (("resolver_id", SELF_MODEL_ID), *outlook.model_dump(
                        mode="json", exclude={"builders", "reason"}).items()))


def _build(view: StepView, goal: GoalNode, gap: models.CapabilityGap, record: dict[str, Any],
           changes: GoalChanges, told: tuple[Decision, ...],
           ) -> Generator[Request, Any, Done[list[str] | moves.Hire]]:
    """The build subgoal (made now, or found by its key after a crash), its share of the
    goal's budget, and the goal parked on it."""
    key = f"build:{gap.capability_tag}:{goal.attempt_count}"
    specs, notes = settled_specs(gap.build_constraints)
    said: tuple[Flow | Decision, ...] = (*told, *(Flow(goal.id, note) for note in notes))
    core = (TOOL_CONTRACT, *specs)
    existing = view.children_keys(goal.id).get(key)
    done = StepChanges()
    if existing is None:
        child: str = yield NewChild(goal.id, GoalSpec(
            f"Build a tool that provides the capability '{gap.capability_tag}': "
            f"{gap.rationale}. The tool is a Python module with a function "
            "run(request: dict) -> dict returning a resolution output.",
            f"build tool: {gap.capability_tag}", "code", purpose="build",
            builds_capability=gap.capability_tag), core, key, said)
    else:
        child = existing
        done += StepChanges((*said, StoreConstraints(core, ride=False)))
    if view.cost_left(child) == 0:
        done += AllocateChildren(goal.id, ((child, 1.0),), share=BUILD_SHARE)
    return Done([child], done + StepChanges((
        Transition(goal.id, S.PENDING, changes | GoalChanges(awaiting=child,
                                                             capability_gap=record)),
        Flow(goal.id, f"BUILD: no tool provides '{gap.capability_tag}'; "
                      f"build subgoal {child}"))))


def on_build_done(view: StepView, move: moves.BuildDone) -> Done[list[str] | moves.Hire]:
    """The build subgoal's verified output is registered as a tool in one commit with
    `BUILT_BY`, `IMPLEMENTED_BY`, `REPLACED_BY`, `COMPOSED_OF`, and the goal tries again
    with it; a failed build goes to HIRE."""
    goal = move.goal
    child = view.goal(goal.require("awaiting"))
    gap = goal.gap()
    if child.status == S.INFEASIBLE:
        return Done(moves.Hire(goal, gap, "build_failed", S.PENDING))
    if child.status != S.RESOLVED:
        return Done([])
    built = _tool_from(view, view.resolution(child.require("output_artifact_id")),
                       gap["capability_tag"], child)
    if isinstance(built, str):
        return Done(moves.Hire(goal, gap, "build_failed", S.PENDING), StepChanges((
            Flow(goal.id, f"the built tool cannot be registered: {built}"),)))
    resolver_id = built.id or f"resolver:{gap['capability_tag'].replace('_', '-')}-" \
                              f"{child.id[-8:].lower()}"
    return Done([goal.id], StepChanges((
        RegisterTool(built, resolver_id, goal, child.resolver_id or CLAUDE_ID,
                     (child.require("output_artifact_id"),),
                     tuple(sorted({a.resolver_id for a in view.tried(goal)})),
                     resumed(goal, gap, retry=True), child.id),
        Flow(goal.id, f"BUILD done: registered {resolver_id}"))))


def _tool_from(view: StepView, output: models.ResolutionOutput, tag: str, child: GoalNode,
               ) -> ToolDefinition | str:
    """A build's output is the tool's code, or a composite plan as JSON
    (``{"steps": [resolver ids]}``, format ``tool_plan``); the tool, or why the kernel
    cannot register it (its code fails the static check, a step is not a registered
    script tool, the plan is malformed)."""
    label = f"{tag.replace('_', ' ')} (built)"
    try:
        if output.format == "tool_plan":
            plan = json.loads(output.content)
            tool = ToolDefinition(label=label, description=output.notes, capabilities=[tag],
                                  steps=list(plan["steps"]))
            return "; ".join(view.tool_problems(tool)) or tool
        problems = view.code_problems(output.content)
        if problems:
            return "; ".join(problems)
        return ToolDefinition(label=label, description=output.notes or child.description,
                              capabilities=[tag], code=output.content)
    except (ValidationError, ValueError) as exc:
        return str(exc)
