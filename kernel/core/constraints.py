"""The constraint engine: content-addressed constraints, the roles they play on a goal,
inheritance (axiom B6) and the constraint signature used for goal similarity."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kernel.core.envelopes import Constraint, ConstraintSpec, ConstraintType, Provenance
from kernel.core.goal_node import GoalChanges
from kernel.core.run import Run
from kernel.core.state_machine import Status, check_transition
from kernel.store.base import GraphStore
from kernel.store.ontology import CONSTRAINT_ROLES

ROLES = CONSTRAINT_ROLES  # see kernel.store.ontology
# Budget-class domains say little about how to solve a goal, so the signature omits them.
SIGNATURE_EXCLUDED_DOMAINS = frozenset({"cost", "schedule"})

Signature = tuple[tuple[str, str], ...]


class ConstraintEngine:
    def __init__(self, store: GraphStore) -> None:
        self.store = store
        # Constraints read so far: immutable, never deleted, and named by their content, so
        # each is read from the store once per kernel.
        self._known: dict[str, Constraint] = {}

    def upsert(self, specs: Sequence[ConstraintSpec], ride: Run | None = None) -> list[str]:
        """Store constraints (identical content is one constraint); ids in input order.

        Constraints are immutable and never deleted, so upserting them is not a run
        commit: it is idempotent and safe to repeat after a crash. With ``ride`` they are
        stored by that run's next commit that takes them (the step's ``set_role``), or
        just before any other."""
        constraints = [spec.with_id() for spec in specs]
        if constraints:
            rows = {c.id: {"id": c.id, "type": c.type.value, "domain": c.domain, "title": c.title,
                           "payload": json.dumps(c.payload, sort_keys=True),
                           "provenance": c.provenance.model_dump_json()} for c in constraints}
            ordered = [rows[k] for k in sorted(rows)]
            if ride is None:
                self.store.run("constraint/upsert", {"rows": ordered})
            else:  # a read instead of a write: only constraints not stored yet ride
                self._read([r["id"] for r in ordered])
                new = {c.id: c for c in constraints if c.id not in self._known}
                pending = {r["id"] for r in ride.step.pending_constraints}
                ride.step.pending_constraints.extend(
                    r for r in ordered if r["id"] in new and r["id"] not in pending)
                self._known.update(new)  # exactly as the riding commit stores them
        return [c.id for c in constraints]

    def get_many(self, ids: Iterable[str]) -> list[Constraint]:
        """The constraints in id order (one read for those this kernel has not read yet)."""
        wanted = sorted(set(ids))
        self._read(wanted)
        missing = [i for i in wanted if i not in self._known]
        if missing:
            raise KeyError(f"unknown constraint id(s): {missing}")
        return [self._known[i] for i in wanted]

    def _read(self, ids: Sequence[str]) -> None:
        """Read the stored constraints among ``ids`` this engine does not know yet."""
        unread = [i for i in ids if i not in self._known]
        if unread:
            for r in self.store.run("constraint/get_many", {"ids": unread}):
                self._known[r["id"]] = Constraint(
                    id=r["id"], type=ConstraintType(r["type"]), domain=r["domain"],
                    title=r["title"], payload=json.loads(r["payload"]),
                    provenance=Provenance.model_validate_json(r["provenance"]))

    def roles(self, goal_id: str) -> dict[str, list[str]]:
        result: dict[str, list[str]] = {role: [] for role in ROLES}
        for row in self.store.run("constraint/of_goal", {"goal_id": goal_id}):
            result[row["role"]].append(row["id"])
        return result

    def inherited_by_children_of(self, goal_id: str) -> list[str]:
        """A child inherits the union of its ancestors' resolved constraints (the parent's
        included): assumed true below, so never eligible again there."""
        return [r["id"] for r in self.store.run("constraint/ancestors_resolved",
                                                {"goal_id": goal_id})]

    def answered_by(self, goal_id: str) -> tuple[str, dict[str, list[tuple[str, str]]]]:
        """The parent's summary, and each of its selected constraints with the live parts
        (id, summary) its decomposition gave it to (none: the whole answers for it);
        ('', {}) for a root."""
        rows = self.store.run("constraint/answered_by", {"goal_id": goal_id})
        parts = {r["id"]: [(str(i), str(s)) for i, s in r["parts"] if i is not None]
                 for r in rows}
        return (str(rows[0]["parent"]) if rows else ""), parts

    def set_role(self, run: Run, goal_id: str, role: str, ids: Iterable[str],
                 from_status: Status, to_status: Status,
                 changes: GoalChanges | None = None, pattern: Mapping[str, Any] | None = None,
                 capabilities: Sequence[str] = ()) -> None:
        """Replace a role's constraint set and move the goal, in one commit.

        For ``eligible`` the goal's inherited constraints are removed first (B6), but not
        the coupling constraints a conflict pushed to it. With a
        ``pattern`` (``Patterns.row``) the commit stores it and the goal becomes its
        instance, requiring ``capabilities``."""
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}")
        check_transition(from_status, to_status)
        wanted = sorted(set(ids))
        if role == "eligible":  # a coupling constraint pushed to it is its own to meet
            held = self.roles(goal_id)
            inherited = set(held["inherited"]) - set(held["coupling"])
            wanted = [cid for cid in wanted if cid not in inherited]
        self.get_many(wanted)  # every id must name a stored constraint
        run.commit("constraint/set_role", {
            "goal_id": goal_id, "role": role, "ids": wanted,
            "from": from_status.value, "to": to_status.value,
            "changes": changes.to_properties() if changes is not None else {},
            "pattern": dict(pattern) if pattern is not None else None,
            "capabilities": sorted(set(capabilities)),
        }, what=f"set {role} constraints of {goal_id}")


    def add_roles(self, run: Run, goal_id: str, roles: dict[str, Sequence[str]],
                  consumes: bool = False) -> None:
        """Add constraints to roles of a goal, in one commit (no transition)."""
        rows = [{"id": cid, "role": role} for role in sorted(roles)
                for cid in sorted(set(roles[role]))]
        unknown = set(roles) - set(ROLES)
        if unknown:
            raise ValueError(f"unknown roles {sorted(unknown)}")
        if not rows:
            return
        self.get_many([r["id"] for r in rows])
        run.commit("constraint/add_roles", {"goal_id": goal_id, "rows": rows},
                   what=f"add constraint roles to {goal_id}", consumes=consumes)


def constraint_signature(constraints: Iterable[Constraint]) -> Signature:
    """Sorted distinct (type, domain) pairs, budget domains excluded."""
    return tuple(sorted({(c.type.value, c.domain) for c in constraints
                         if c.domain not in SIGNATURE_EXCLUDED_DOMAINS}))
