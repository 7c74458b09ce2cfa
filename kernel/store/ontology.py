"""The kernel's graph vocabulary: every node label and relationship type it writes.

Cypher cannot take a label or relationship type as a parameter, so the few
statements that work across labels (schema DDL, export, import) are templates.
They may only be filled with names from this closed vocabulary, never with
input: that is what keeps every statement parameterized.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LabelSpec:
    """A node label, the namespace of its ids and the property shown as its caption."""

    name: str
    id_prefix: str
    caption: str
    indexed: tuple[str, ...] = ()
    exported: bool = True


@dataclass(frozen=True)
class VectorSpec:
    label: str
    prop: str
    dimensions: int
    index_name: str


LABELS: tuple[LabelSpec, ...] = (
    LabelSpec("Actor", "actor:", "caption"),
    LabelSpec("Artifact", "artifact:", "caption", indexed=("sha256", "goal_id", "key")),
    LabelSpec("Attempt", "attempt:", "caption", indexed=("goal_id",)),
    LabelSpec("BudgetEvent", "budget:", "caption", indexed=("goal_id", "proposal")),
    LabelSpec("Capability", "capability:", "caption"),
    LabelSpec("CapabilityRequest", "capreq:", "caption",
              indexed=("fingerprint", "status", "capability_tag")),
    LabelSpec("Chunk", "chunk:", "caption", indexed=("repo",)),
    LabelSpec("Constraint", "constraint:", "caption", indexed=("type", "domain")),
    LabelSpec("Diagnostic", "diagnostic:", "caption", indexed=("attempt_id",)),
    LabelSpec("FailureMode", "failure:", "caption"),
    LabelSpec("File", "file:", "caption", indexed=("repo", "path", "module")),
    LabelSpec("Goal", "node:", "caption",
              indexed=("run_id", "root_id", "status", "builds_capability")),
    LabelSpec("GoalPattern", "goal_pattern:", "caption"),
    LabelSpec("LedgerEntry", "ledger:", "caption", indexed=("run_id", "reuse_key")),
    LabelSpec("LogEntry", "log:", "caption", indexed=("run_id", "goal_id")),
    LabelSpec("Repository", "repository:", "caption"),
    LabelSpec("Resolver", "resolver:", "caption"),
    LabelSpec("Run", "run:", "caption"),
    LabelSpec("Symbol", "symbol:", "caption", indexed=("repo", "qname", "name", "file")),
    # Bookkeeping of the store itself: never exported, never imported.
    LabelSpec("SchemaInfo", "schema:", "caption", exported=False),
    LabelSpec("Migration", "migration:", "caption", exported=False),
    LabelSpec("ImportCheckpoint", "import:", "caption", exported=False),
)

REL_TYPES: tuple[str, ...] = (
    "ABOUT",            # LogEntry -> Goal
    "ANSWERED_BY",      # CapabilityRequest -> Resolver
    "ASKS_FOR",         # CapabilityRequest -> Capability
    "BUILT_BY",         # Resolver -> Resolver | Actor
    "CALLS",            # Symbol -> Symbol (a call the parse resolved)
    "CHARGED_TO",       # BudgetEvent -> Goal
    "CHILD_OF",         # Goal -> Goal
    "CHOSE",            # Attempt -> Artifact (the person's suggestion it chose)
    "COMPOSED_OF",      # Resolver -> Resolver {order, role}
    "DEFINES",          # File -> Symbol
    "DEPENDS_ON",       # Goal -> Goal (siblings)
    "DERIVED_FROM",     # Artifact -> Artifact, Constraint -> Constraint
    "DRAWN_FROM",       # BudgetEvent -> Goal (the parent a grant came from)
    "ENABLES",          # Capability -> Capability
    "FAILED_BECAUSE",   # Attempt -> FailureMode
    "FAILED_ON",        # Resolver -> GoalPattern {sigma_v, cost, ...}
    "FOLLOWS",          # LedgerEntry -> LedgerEntry (hash chain)
    "FOR",              # Attempt -> Goal
    "HAS_CONSTRAINT",   # Goal -> Constraint {roles} (one per pair)
    "HOLDS",            # Repository -> File, File -> Chunk
    "IMPLEMENTED_BY",   # Resolver -> Artifact (the code a registered tool runs)
    "IMPORTS",          # File -> File (the module it imports)
    "INSTANCE_OF",      # Goal -> GoalPattern
    "PAYS_FOR",         # BudgetEvent -> Attempt
    "PLANNED",          # Goal -> Artifact (tool plan)
    "PRODUCED",         # Attempt | Resolver -> Artifact
    "PROPOSED_BY",      # Run | Attempt -> Actor (the script or model that proposed)
    "PROVIDES",         # Resolver -> Capability
    "RAISED_FOR",       # CapabilityRequest -> Goal (the goals waiting on the answer)
    "RECORDED_IN",      # LedgerEntry -> Run
    "REPLACED_BY",      # Resolver -> Resolver
    "REPORTED",         # Attempt -> Diagnostic (a failing test, an unparseable file)
    "REQUIRES",         # GoalPattern -> Capability
    "ROOT",             # Run -> Goal
    "SATISFIES",        # Artifact -> Constraint
    "SIMILAR_TO",       # GoalPattern -> GoalPattern {score}
    "SUCCEEDED_ON",     # Resolver -> GoalPattern {sigma_v, cost, ...}
    "TESTS",            # Symbol (a test) -> Symbol it calls directly
    "TRIED_FOR",        # Attempt -> GoalPattern
    "USED",             # Attempt -> Resolver
    "USED_CONSTRAINT",  # Attempt -> Constraint
    "VIOLATED",         # Attempt -> Constraint {check, sigma}
)

VECTORS: tuple[VectorSpec, ...] = (
    VectorSpec("GoalPattern", "embedding", 384, "goal_pattern_embedding"),
    VectorSpec("FailureMode", "embedding", 384, "failure_mode_embedding"),
    VectorSpec("Symbol", "embedding", 384, "symbol_embedding"),
)

# The roles a constraint plays on a goal, in the order a HAS_CONSTRAINT edge lists them
# (one edge per goal and constraint; the statements that write it spell this order out).
# coupling: added at a lowest common ancestor by a global conflict, and given to the parts
# of its next decomposition that produce the coupled values; always selected where held.
# owed: an inherited constraint the goal answers for (its parent's decomposition gave it
# to this part); always selected.
CONSTRAINT_ROLES: tuple[str, ...] = ("core", "eligible", "selected", "inherited", "resolved",
                                     "coupling", "owed")

# Labels a Goal or an Attempt carries beside its own, kept in step with its status or
# verdict by the statement that changes it, so that Neo4j Browser's style can colour them.
# Never exported: an import sets them again from the properties (schema/status_labels).
STATUS_LABELS: frozenset[str] = frozenset({"Resolved", "Failed", "Parked", "Stale", "Sat",
                                           "Unsat"})

LABEL_NAMES: frozenset[str] = frozenset(spec.name for spec in LABELS)
EXPORTED_LABELS: tuple[str, ...] = tuple(sorted(s.name for s in LABELS if s.exported))
REL_TYPE_NAMES: frozenset[str] = frozenset(REL_TYPES)


def vector_for(label: str) -> VectorSpec | None:
    for spec in VECTORS:
        if spec.label == label:
            return spec
    return None
