"""Experience that replaces model calls: a verified record answers what a model would
be asked again.

Two answers are reused, each only from goals of *earlier runs* that were verified and
resolved, and each recorded in the ledger as a knowledge-graph entry before it is used
(``Proposals.recall``), so a replay is served the record instead of the graph:

- **identification** (step 2): a goal with the same description, normalized summary,
  core and inherited constraints asks the very question an earlier goal asked; when
  that goal's identification was asked of the same source (the same script content, or
  the same model), the constraints identified for it and the capabilities it needed are
  reused whole. An edited script, or another model, is asked again.
- **leaf classification** (step 7): a goal whose pattern (or a pattern SIMILAR_TO it,
  which has the same constraint signature) was resolved as an atomic leaf, and never
  decomposed, is an atomic leaf too, when that goal's run was answered by the same
  source this run asks (an edited script, or another model, is asked again); one
  decomposition on record, whoever classified it, and the model is asked.

A run started with ``--fresh`` reuses neither (``Proposals.reuse``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kernel.core.envelopes import Constraint, ConstraintSpec
from kernel.core.goal_node import GoalNode
from kernel.kg.patterns import normalize
from kernel.kg.run_view import KnowledgeRun
from kernel.protocol import solve_models as models
from kernel.repositories import knowledge

CANDIDATES = 20


def identified_read(k: KnowledgeRun, goal: GoalNode, inherited: list[Constraint]
                    ) -> Callable[[], dict[str, Any] | None]:
    """How the identification of an earlier goal asking the same question of the same
    source is read for step 2 (rows, or None: ask the model). The read is recalled
    through ``Proposals.recall`` (see ``identification``)."""
    core = sorted(k.constraints.roles(goal.id)["core"])
    wanted_inherited = sorted(c.id for c in inherited)
    identity = k.proposals.answering()

    def read() -> dict[str, Any] | None:
        if identity is None:  # --fresh, or a source that cannot say who it is: ask
            return None
        for row in knowledge.identified_before(k.store, normalize(goal.summary),
                                               goal.description, identity, k.run.run_id,
                                               CANDIDATES):
            if sorted(row["core"]) == core and sorted(row["inherited"]) == wanted_inherited:
                extra = [c.model_dump(mode="json", exclude={"id"}) for c in
                         k.constraints.get_many(set(row["eligible"]) - set(core))]
                return {"goal_id": row["goal_id"], "run_id": row["run_id"],
                        "constraints": extra,
                        "required_capabilities": sorted(row["required_capabilities"] or [])}
        return None

    return read


def identification(found: dict[str, Any]) -> tuple[list[ConstraintSpec], list[str], str]:
    """The identification a recalled record settles: its constraints beyond the core (as
    specs, so a replay in an empty graph stores the same ones), its capabilities and
    where it came from (``goal ID of run ID``)."""
    specs = [ConstraintSpec.model_validate(c) for c in found["constraints"]]
    return specs, list(found["required_capabilities"]), \
        f"goal {found['goal_id']} of {found['run_id']}"


def leaf_read(k: KnowledgeRun, goal: GoalNode) -> Callable[[], dict[str, Any] | None] | None:
    """How the record of the goal's kind is read for step 7 (rows, or None: ask the
    model); None when the goal has no pattern to look up. The read is recalled through
    ``Proposals.recall`` (see ``leaf_classification``)."""
    pattern_id = goal.pattern_id
    if pattern_id is None:
        return None

    identity = k.proposals.answering()

    def read() -> dict[str, Any] | None:
        if identity is None:  # --fresh, or a source that cannot say who it is: ask
            return None
        row = knowledge.leaves_before(k.store, pattern_id, identity, k.run.run_id)
        atomic, decomposed = int(row["atomic"] or 0), int(row["decomposed"] or 0)
        if atomic == 0 or decomposed > 0:
            return None
        return {"atomic": atomic, "example": row["example"]}

    return read


def leaf_classification(found: dict[str, Any]) -> models.LeafClassification:
    """The atomic-leaf classification the recalled record settles."""
    return models.LeafClassification(
        is_leaf=True, leaf_kind="atomic",
        leaf_reason=f"{found['atomic']} verified goal(s) of this kind were atomic leaves "
                    f"and none was decomposed (e.g. {found['example']})")
