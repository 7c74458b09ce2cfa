"""Step 13, assembly: the final artifact of a run, with full lineage and sigma_system.

sigma_system is the minimum path confidence over the live leaves (each leaf's path
confidence is the product of sigma_v from the root down). A root that is itself a leaf
is its own final artifact (no call); otherwise the leaves' outputs, in creation order,
go to one ``assemble`` proposal, the result is verified against the root's selected
constraints like any output (the parts' tests run on the assembled code), and only then
registered as derived from all of them.
"""

from __future__ import annotations

import json
from typing import Any

from kernel.core.envelopes import Lineage
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.state_machine import Status
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.refusal import RefusalReason
from kernel.repositories import goals
from kernel.runtime.gate import CLAUDE_ID, ask
from kernel.runtime.kernel import Kernel
from kernel.solve import moves, verification
from kernel.solve.steps._shared import constraints_of

S = Status


ASSEMBLIES = 2  # an assembly that fails the root's constraints is tried once more


def assemble(k: Kernel, move: moves.Assemble) -> list[str]:
    """Proposal `assemble` over the leaves' outputs; the assembly is verified against the
    root's test and tool-contract constraints (the parts' tests run on the assembled code)
    and must not be empty; a failing one is asked again once with the trace, then the root
    is refused (`ASSEMBLY_VIOLATES_CONSTRAINTS`); the final artifact derives from every
    leaf output and carries σ_system (a leaf root is its own final artifact, no call)."""
    root = move.goal
    leaves = goals.leaves(k.store, k.run.run_id)
    sigma = k.confidence.system_sigma()
    parts, outputs = [], []
    for leaf in leaves:
        goal = k.tree.get(leaf["id"])
        output = models.ResolutionOutput.model_validate_json(
            k.artifacts.read(goal.require("output_artifact_id")))
        outputs.append(output)
        parts.append({"goal_id": goal.id, "goal_summary": goal.summary,
                      "artifact_id": goal.require("output_artifact_id"), "format": output.format,
                      "content": output.content, **({"tests": output.tests} if output.tests else {})})
    # Decided again on the whole: the logic checks that read the deliverable (tests, the
    # tool contract). Arithmetic was decided over the parts by the composite check, and
    # semantic constraints were judged on each part.
    constraints = [c for c in constraints_of(k, root.id, "selected")
                   if verification.method_of(c) in ("tests", "contract")]
    tried = (root.feedback or {}).get("assembly", {})
    request = ops.ASSEMBLE.request(goal_id=root.id, goal_description=root.description,
                                   constraints=constraints, feedback=tried or None,
                                   payload={"goal_summary": root.summary, "parts": parts})
    proposal = ask(k, root.id, ops.ASSEMBLE, request)
    assembly: models.Assembly = proposal.output
    own = [models.ResolutionOutput.model_validate_json(k.artifacts.read(root.output_artifact_id))
           ] if root.output_artifact_id else []
    whole = assembled_output(assembly, [*own, *outputs])
    attempt = int(tried.get("attempt", 0)) + 1
    if not (whole.content.strip() or any(t.strip() for t in whole.files.values())):
        return _refused(k, root, [{"constraint_id": "assembly", "passed": False,
                                   "detail": {"problem": "the assembled deliverable is empty"}}],
                        attempt)
    verdict = verification.verify(k, root, constraints, whole) if constraints else None
    if verdict is not None and verdict.verdict != "SAT":
        return _refused(k, root, [c.model_dump(mode="json") for c in verdict.failed()], attempt)
    if verdict is not None:
        sigma = verdict.sigma_v if sigma is None else min(sigma, verdict.sigma_v)
    inputs = [p["artifact_id"] for p in parts]
    artifact = k.artifacts.register(
        root.id, assembly.content, type="final", format=assembly.format,
        metadata={"sigma_system": sigma, "leaves": [p["goal_id"] for p in parts],
                  "notes": assembly.notes},
        lineage=Lineage(node_id=root.id, resolver_id=CLAUDE_ID, input_artifact_ids=inputs),
        sigma=sigma, key=f"final:{proposal.ledger_hash}")
    # the log line, the queue after the run's last step and the spend ride its commit
    k.log.flow(root.id, f"goal achieved: final artifact {artifact.id} from "
                           f"{len(parts)} parts, sigma_system={sigma}")
    k.run.will_wake([])
    k.tree.transition(root.id, S.RESOLVED, GoalChanges(
        leaf_kind=None, final_artifact_id=artifact.id, sigma_system=sigma))
    return []


def assembled_output(assembly: models.Assembly, parts: list[models.ResolutionOutput],
                     ) -> models.ResolutionOutput:
    """The deliverable as verification sees it: the tests of ``parts`` (the root's own
    verified output first, then the leaves') run against the assembled code (a later
    test file of the same name wins, the assembly's own last)."""
    tests = {path: text for part in parts for path, text in sorted(part.tests.items())}
    return models.ResolutionOutput(artifact_type="final", format=assembly.format,
                                   content=assembly.content, files=assembly.files,
                                   tests={**tests, **assembly.tests})


def _refused(k: Kernel, root: GoalNode, trace: list[dict[str, Any]], attempt: int) -> list[str]:
    """Assemble again with the violation trace, or refuse the root with it."""
    failed = ", ".join(sorted(str(c["constraint_id"]) for c in trace))
    if attempt < ASSEMBLIES:
        k.log.flow(root.id, f"the assembly violates {failed}: assembling again "
                            f"({attempt + 1}/{ASSEMBLIES})")
        k.run.will_wake([root.id])
        k.tree.update(root.id, S.PENDING, GoalChanges(
            feedback={**(root.feedback or {}),
                      "assembly": {"attempt": attempt, "violations": trace}}))
        return [root.id]
    return k.refuse_goal(root, RefusalReason.ASSEMBLY_VIOLATES_CONSTRAINTS,
                         f"{attempt} assemblies violate {failed}: "
                         + json.dumps(trace, sort_keys=True)[:1500],
                         constraints=failed, attempts=str(attempt))
