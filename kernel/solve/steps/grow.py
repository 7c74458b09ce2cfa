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
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

from pydantic import ValidationError

from kernel.core.budget import Amount
from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.goals import GoalSpec
from kernel.core.state_machine import Status
from kernel.kg import context as kg_context
from kernel.protocol import ToolDefinition
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.protocol.resolver_ids import SELF_MODEL_ID
from kernel.protocol.self_model import BuildOutlook
from kernel.repositories import goals
from kernel.runtime.gate import CLAUDE_ID, ask
from kernel.runtime.installed import resolvers
from kernel.runtime.kernel import Kernel
from kernel.solve import moves, prompt_inputs
from kernel.solve.capability_requests import (
    budget_class,
    request_fingerprint,
    resume_changes,
    retry_with,
)
from kernel.solve.steps._shared import NOT_RESOLVERS, constraints_of, proposed_specs, request_for
from kernel.solve.tools import ToolDefinitionError, code_problems, register

S = Status
OUTLOOK = "self-model/build_outlook"  # the ledger's name for the self-model's answer
BUILD_SHARE = Fraction(1, 2)  # of the goal's remaining budget, as in the design
# The static check and the run() contract, checked deterministically on every build.
TOOL_CONTRACT = ConstraintSpec(
    type="logic", domain="software", title="the tool passes the static check and defines run()",
    payload={"check": "tool_contract"}, provenance=Provenance(source="derived"))


def grow(k: Kernel, move: moves.Grow) -> list[str] | moves.Hire:
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
    if missing is not None:
        gap = models.CapabilityGap(capability_tag=missing, buildable=True,
                                   rationale=f"no registered tool provides '{missing}'")
    else:
        tried = sorted({a.resolver_id for a in k.attempts.of_goal(goal.id)})
        _, context = kg_context.block(k, goal, "gap")
        proposal = ask(k, goal.id, ops.DETECT_CAPABILITY_GAP, request_for(
            goal, ops.DETECT_CAPABILITY_GAP, constraints_of(k, goal.id, "selected"), context,
            tried_resolvers=tried, failures=changes.feedback or goal.feedback,
            capabilities=k.proposals.observe("capabilities", goal.id,
                                             lambda: registered_capabilities(k)),
            sandbox="\n".join(prompt_inputs.sandbox_limits(k.policy))))
        gap = proposal.output
    record = gap_record(k, goal, gap)
    found = lookup_before_build(k, goal, gap.capability_tag)
    if found["tool"] is not None:
        retry_with(k, goal, changes | resume_changes(k, goal, record, retry=True))
        k.log.flow(goal.id, f"lookup before build: {found['tool']} provides "
                               f"'{gap.capability_tag}'; no build needed")
        return [goal.id]
    reason = _why_not_build(k, goal, gap, found)
    if reason is not None:
        return moves.Hire(goal, record, reason, S.PENDING, changes)
    return _build(k, goal, gap, record, changes)


def registered_capabilities(k: Kernel) -> dict[str, list[str]]:
    """Each capability tag with the tools that provide it (what a gap is measured against)."""
    tags: dict[str, list[str]] = {}
    for row in k.registry.summary():
        for tag in row["capabilities"]:
            tags.setdefault(tag, []).append(row["id"])
    return {tag: sorted(ids) for tag, ids in sorted(tags.items())}


def gap_record(k: Kernel, goal: GoalNode, gap: models.CapabilityGap) -> dict[str, Any]:
    """The gap as stored on the goal and fingerprinted for HIRE."""
    constraints = [c.model_dump(mode="json", include={"type", "domain", "title", "payload"})
                   for c in gap.build_constraints]
    cls = budget_class(k.budget.remaining(goal.id).cost)
    return {"capability_tag": gap.capability_tag, "build_constraints": constraints,
            "buildable": gap.buildable, "rationale": gap.rationale, "budget_class": cls,
            "fingerprint": request_fingerprint(gap.capability_tag, constraints, cls)}


def lookup_before_build(k: Kernel, goal: GoalNode, tag: str) -> dict[str, Any]:
    """Registry and history for ``tag``; the tool chosen is the best-ranked one that
    serves the goal's modality and has not been tried on this goal."""
    found = k.history.lookup_before_build(tag)
    tried = {a.resolver_id for a in k.attempts.of_goal(goal.id)}
    usable = [c for c in k.registry.candidates([tag], goal.modality)
              if c.id not in tried and c.id not in NOT_RESOLVERS]
    failed_builds = sorted(b["id"] for b in found.builds if b["status"] == "infeasible")
    result: dict[str, Any] = {"tool": usable[0].id if usable else None,
                              "failed_builds": failed_builds,
                              "tools": sorted(t["id"] for t in found.tools),
                              "requests": sorted(r["id"] for r in found.requests)}
    k.log.decision(goal.id, "lookup_before_build", candidates=result["tools"],
                   chosen=result["tool"], rationale="registry capability match, then history",
                   capability=tag, tried=sorted(tried), failed_builds=failed_builds,
                   requests=result["requests"])
    return result


def _why_not_build(k: Kernel, goal: GoalNode, gap: models.CapabilityGap,
                   found: dict[str, Any]) -> str | None:
    if not gap.buildable:
        return "not_buildable"
    if found["failed_builds"]:
        return "build_failed_before"
    if goal.purpose == "build":
        return "build_needs_a_tool"  # builds do not recurse: a human supplies the part
    return self_model_outlook(k, goal, gap.capability_tag).reason


def self_model_outlook(k: Kernel, goal: GoalNode, tag: str) -> BuildOutlook:
    """The self-model's answer to "can the kernel itself build this?", recorded in the
    ledger before it decides (it reads the whole graph's build history, so a resume or
    a replay is served the recorded answer)."""
    remaining = k.budget.remaining(goal.id)
    share = Amount(int(remaining.cost * BUILD_SHARE), int(remaining.time * BUILD_SHARE))

    def read() -> dict[str, Any]:
        return resolvers().self_model(k.run).build_outlook(
            tag, goal.modality, share, k.config.build_min_usd,
            k.config.build_min_seconds).model_dump(mode="json")

    outlook = BuildOutlook.model_validate(k.proposals.observe(
        OUTLOOK, goal.id, read, source=SELF_MODEL_ID))
    k.log.decision(goal.id, "self_model", candidates=outlook.builders,
                   chosen="build" if outlook.can_build else "hire",
                   rationale=outlook.reason or "the kernel can build it within half its budget",
                   resolver_id=SELF_MODEL_ID, **outlook.model_dump(
                       mode="json", exclude={"builders", "reason"}))
    return outlook


def _build(k: Kernel, goal: GoalNode, gap: models.CapabilityGap,
           record: dict[str, Any], changes: GoalChanges) -> list[str]:
    key = f"build:{gap.capability_tag}:{goal.attempt_count}"
    existing = goals.children_keys(k.store, goal.id)
    core = k.constraints.upsert([TOOL_CONTRACT,
                                 *proposed_specs(k, goal.id, gap.build_constraints)])
    child = existing.get(key) or k.tree.create_child(
        goal.id, GoalSpec(
            f"Build a tool that provides the capability '{gap.capability_tag}': "
            f"{gap.rationale}. The tool is a Python module with a function "
            "run(request: dict) -> dict returning a resolution output.",
            f"build tool: {gap.capability_tag}", "code", purpose="build",
            builds_capability=gap.capability_tag),
        core_ids=core, decomposition_key=key)
    if k.budget.remaining(child).cost == 0:
        k.budget.allocate_children(goal.id, {child: 1.0}, share=BUILD_SHARE)
    k.tree.transition(goal.id, S.PENDING,
                      changes | GoalChanges(awaiting=child, capability_gap=record))
    k.log.flow(goal.id, f"BUILD: no tool provides '{gap.capability_tag}'; "
                           f"build subgoal {child}")
    return [child]


def on_build_done(k: Kernel, move: moves.BuildDone) -> list[str] | moves.Hire:
    """The build subgoal's verified output is registered as a tool in one commit with
    `BUILT_BY`, `IMPLEMENTED_BY`, `REPLACED_BY`, `COMPOSED_OF`, and the goal tries again
    with it; a failed build goes to HIRE."""
    goal = move.goal
    child = k.tree.get(goal.require("awaiting"))
    gap = goal.gap()
    if child.status == S.INFEASIBLE:
        return moves.Hire(goal, gap, "build_failed", S.PENDING)
    if child.status != S.RESOLVED:
        return []
    output = models.ResolutionOutput.model_validate_json(
        k.artifacts.read(child.require("output_artifact_id")))
    try:
        tool = _tool_from(output, gap["capability_tag"], child)
        resolver_id = tool.id or f"resolver:{gap['capability_tag'].replace('_', '-')}-" \
                                 f"{child.id[-8:].lower()}"
        builder = child.resolver_id or CLAUDE_ID
        register(k, tool, resolver_id=resolver_id, goal=goal, builder_id=builder,
                 lineage_inputs=[child.require("output_artifact_id")],
                 replaces=sorted({a.resolver_id for a in k.attempts.of_goal(goal.id)}),
                 goal_changes=resume_changes(k, goal, gap, retry=True), key=child.id)
    except (ToolDefinitionError, ValidationError, ValueError) as exc:
        k.log.flow(goal.id, f"the built tool cannot be registered: {exc}")
        return moves.Hire(goal, gap, "build_failed", S.PENDING)
    k.log.flow(goal.id, f"BUILD done: registered {resolver_id}")
    return [goal.id]


def _tool_from(output: models.ResolutionOutput, tag: str, child: GoalNode,
               ) -> ToolDefinition:
    """A build's output is the tool's code, or a composite plan as JSON
    (``{"steps": [resolver ids]}``, format ``tool_plan``)."""
    label = f"{tag.replace('_', ' ')} (built)"
    if output.format == "tool_plan":
        plan = json.loads(output.content)
        return ToolDefinition(label=label, description=output.notes, capabilities=[tag],
                              steps=list(plan["steps"]))
    problems = code_problems(output.content)
    if problems:
        raise ToolDefinitionError("; ".join(problems))
    return ToolDefinition(label=label, description=output.notes or child.description,
                          capabilities=[tag], code=output.content)
