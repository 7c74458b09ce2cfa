"""Step 13, assembly: the final artifact of a run, with full lineage and sigma_system.

sigma_system is the minimum path confidence over the live leaves (each leaf's path
confidence is the product of sigma_v from the root down). A root that is itself a leaf
is its own final artifact (no call); otherwise the leaves' outputs, in creation order,
go to one ``assemble`` proposal and the result is registered as derived from all of them.
"""

from __future__ import annotations

from kernel.core.envelopes import Lineage
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.state_machine import Status
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.runtime.gate import CLAUDE_ID, ask
from kernel.runtime.kernel import Kernel

S = Status


def assemble(k: Kernel, root: GoalNode) -> list[str]:
    """Resolve the decomposed root with its assembled artifact."""
    leaves = k.store.run("goal/leaves", {"run_id": k.run.run_id})
    sigma = k.confidence.system_sigma()
    parts = []
    for leaf in leaves:
        goal = k.tree.get(leaf["id"])
        output = models.ResolutionOutput.model_validate_json(
            k.artifacts.read(goal.require("output_artifact_id")))
        parts.append({"goal_id": goal.id, "goal_summary": goal.summary,
                      "artifact_id": goal.require("output_artifact_id"), "format": output.format,
                      "content": output.content})
    proposal = ask(k, root.id, ops.ASSEMBLE, ops.ASSEMBLE.request(
        goal_id=root.id, goal_description=root.description,
        payload={"goal_summary": root.summary, "parts": parts}))
    assembly: models.Assembly = proposal.output
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

