"""The goal tree: goals are graph nodes, each a persistent state machine."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kernel.core.budget import ChildGrants
from kernel.core.goal_node import STEP_FIELDS, GoalChanges, GoalNode
from kernel.core.run import CommitRejected, Run
from kernel.core.state_machine import (
    ACTION_STATE,
    COMPOSITE_TRANSITIONS,
    RESUME_TRANSITIONS,
    Action,
    InvalidTransitionError,
    NodeView,
    Status,
    check_reopen,
    check_transition,
    next_action,
)
from kernel.errors import KernelError

DEFAULT_MAX_ATTEMPTS = 5

@dataclass(frozen=True)
class Reopening:
    """What a reopening did: descendants invalidated, and the goals outside the subtree
    that consumed its outputs and are redone (their ids, in no particular order)."""

    invalidated: int
    redone: list[str]

    def said(self) -> str:
        """For a log line."""
        again = f"; dependents redone: {', '.join(sorted(self.redone))}" if self.redone else ""
        return f"{self.invalidated} goals invalidated{again}"


class UnknownGoalError(KernelError):
    """No goal with that id."""


@dataclass(frozen=True)
class Decomposed:
    """What a fresh decomposition's one commit carries beside its children: the
    dependencies among them, their budgets, and the parent's move with its changes."""
    edges: Sequence[tuple[str, str]]
    grants: ChildGrants
    to: Status
    changes: GoalChanges


@dataclass(frozen=True)
class GoalSpec:
    description: str
    summary: str | None = None
    modality: str = "text"
    input_artifact_ids: tuple[str, ...] = ()
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    purpose: str = "solve"  # "build": the goal builds a tool for its parent
    builds_capability: str | None = None
    intake: bool = False  # the root starts with step 1, the intake dialogue
    # the parent's constraints this part answers for (its decomposition said so): always
    # selected, so the part is verified against them
    owed: tuple[str, ...] = ()


class GoalTree:
    """Creates goals and moves them through the state machine, one commit each."""

    def __init__(self, run: Run, tau_local: float = 0.70, tau_global: float = 0.50) -> None:
        self.run = run
        self.store = run.store
        self.tau_local = tau_local
        self.tau_global = tau_global

    # -- creation ------------------------------------------------------------------
    def create_root(self, spec: GoalSpec, core_ids: Iterable[str] = ()) -> str:
        return self._create(spec, None, {"core": list(core_ids)})

    def create_child(self, parent_id: str, spec: GoalSpec, inherited_ids: Iterable[str] = (),
                     core_ids: Iterable[str] = (), decomposition_key: str | None = None,
                     parent: GoalNode | None = None) -> str:
        """``parent``: the parent as the caller already read it (a child copies only
        fields fixed at the parent's creation), saving a read per child."""
        if parent is not None and parent.id != parent_id:
            raise ValueError(f"parent {parent.id} given for a child of {parent_id}")
        return self._create(spec, parent_id, {"core": list(core_ids),
                                              "inherited": list(inherited_ids)},
                            decomposition_key, parent)

    def create_children(self, parent: GoalNode, children: Sequence[tuple[str, GoalSpec]],
                        inherited_ids: Iterable[str] = (),
                        decomposed: Decomposed | None = None,
                        coupling: Mapping[str, Sequence[str]] | None = None) -> list[str]:
        """Create a decomposition's children, given as (decomposition key, spec), with the
        constraints they inherit and those each answers for, in one commit; their ids in
        the order given (those of ``child_ids``). With ``decomposed``, that commit is the
        whole decomposition: the children's dependencies and budgets and the parent's
        move. ``coupling``: by decomposition key, the coupling constraints a child gets
        as its own."""
        roles = [{"id": cid, "role": "inherited"} for cid in sorted(set(inherited_ids))]
        coupling = coupling or {}
        # only the parent's plain spend, log lines and entries ride: the children take
        # seq numbers (an attempt, artifacts or a move would be a commit of their own)
        self.run.store_pending(keep_spend_of=parent.id)
        granted = {row["child_id"]: row for row in decomposed.grants.rows} if decomposed else {}
        rows, ids = [], self.child_ids(len(children))
        for number, ((key, spec), goal_id) in enumerate(zip(children, ids, strict=True)):
            props = self._props(goal_id, spec, parent.id, parent, key)
            props["seq"] = self.run.seq + number
            if goal_id in granted:
                props["cost_allocated"] = granted[goal_id]["cost"]
                props["time_allocated"] = granted[goal_id]["time"]
            owed = [{"id": cid, "role": "owed"} for cid in sorted(set(spec.owed))]
            rows.append({"props": {k: v for k, v in props.items() if v is not None},
                         "roles": roles + owed + [{"id": cid, "role": "coupling"}
                                                  for cid in sorted(set(coupling.get(key, ())))]})
        if not rows:
            return ids
        params: dict[str, Any] = {"goal_id": parent.id, "children": rows, "edges": [],
                                  "grants": [], "grant": None, "from": None, "to": None,
                                  "changes": {}}
        if decomposed is not None:
            current = self.status(parent.id)
            check_transition(current, decomposed.to)
            params |= {"edges": [{"goal_id": g, "depends_on_id": d}
                                 for g, d in decomposed.edges],
                       "grants": decomposed.grants.rows, "grant": decomposed.grants.total,
                       "from": current.value, "to": decomposed.to.value,
                       "changes": step_changes(decomposed.changes)}
        self.run.commit("goal/create_children", params,
                        what=f"create the children of {parent.id}",
                        consumes=decomposed is not None, advances=len(rows))
        return ids

    def child_ids(self, count: int) -> list[str]:
        """The ids the next ``create_children`` gives its children: each the id it would
        have had with a commit of its own."""
        return [self.run.riding_id("goal", offset=number) for number in range(count)]

    def _create(self, spec: GoalSpec, parent_id: str | None, roles: dict[str, list[str]],
                decomposition_key: str | None = None, parent: GoalNode | None = None) -> str:
        if parent is None and parent_id:
            parent = self.get(parent_id)
        goal_id = self.run.new_id("goal")
        props = self._props(goal_id, spec, parent_id, parent, decomposition_key)
        role_rows = [{"id": cid, "role": role} for role, ids in sorted(roles.items())
                     for cid in sorted(set(ids))]
        self.run.commit("goal/create", {
            "parent_id": parent_id, "props": {k: v for k, v in props.items() if v is not None},
            "roles": role_rows,
        }, what=f"create goal under {parent_id or 'the run'}", consumes=False)
        return goal_id

    def _props(self, goal_id: str, spec: GoalSpec, parent_id: str | None,
               parent: GoalNode | None, decomposition_key: str | None) -> dict[str, Any]:
        summary = (spec.summary or _summarize(spec.description)).strip()
        return {
            "id": goal_id, "run_id": self.run.run_id,
            "root_id": parent.root_id if parent else goal_id,
            "parent_id": parent_id, "seq": self.run.seq,
            "depth": parent.depth + 1 if parent else 0,
            "description": spec.description, "summary": summary, "caption": summary[:80],
            "modality": spec.modality, "status": Status.PENDING.value,
            # Thresholds are copied onto the node at creation, for auditability.
            "tau_local": parent.tau_local if parent else self.tau_local,
            "tau_global": parent.tau_global if parent else self.tau_global,
            "attempt_count": 0, "max_attempts": spec.max_attempts,
            "input_artifact_ids": list(spec.input_artifact_ids), "decompositions": 0,
            "stale": False, "decomposition_key": decomposition_key,
            "try_allowance": spec.max_attempts, "purpose": spec.purpose,
            "builds_capability": spec.builds_capability,
            "intake": "open" if spec.intake else None,
            **{f"{m}_{k}": 0 for m in ("cost", "time")
               for k in ("allocated", "spent", "granted", "refunded")},
        }

    # -- reading ---------------------------------------------------------------------
    def _read(self, goal_id: str) -> dict[str, Any]:
        """The step's one read of a goal: its properties, what next_action needs, budget."""
        rows = self.store.run("goal/get", {"goal_id": goal_id})
        if not rows:
            raise UnknownGoalError(f"no goal {goal_id!r}")
        view = dict(rows[0]["view"])
        move = self.run.step.pending_move
        if move is not None and move["goal_id"] == goal_id:  # entered, not stored yet
            view["goal"] = {**view["goal"], "status": move["to"]}
        checked = self.run.step.pending_verification
        if checked is not None:  # recorded, riding the step's move: read as stored
            view["goal"] = {**view["goal"], **_verified(goal_id, checked)}
        return view

    def enter(self, goal_id: str, target: Status) -> None:
        """Move a pending goal into the step it resumes with: the move rides the step's
        first commit that moves the goal on (see ``StepBuffer.pending_move``), so entering a
        step writes nothing of its own."""
        check_transition(self.status(goal_id), target)
        self.run.store_pending()  # one entry at a time
        self.run.step.pending_move = {"goal_id": goal_id, "from": Status.PENDING.value,
                                 "to": target.value}

    def get(self, goal_id: str) -> GoalNode:
        """The goal as stored, validated (a property the model does not declare fails)."""
        return GoalNode.model_validate(self._read(goal_id)["goal"])

    def status(self, goal_id: str) -> Status:
        return self.get(goal_id).status  # the goal's read, which a step has usually made

    def view(self, goal_id: str) -> NodeView:
        row = self._read(goal_id)
        return NodeView(status=Status(row["goal"]["status"]),
                        has_unresolved_dependencies=row["blocked"],
                        has_eligible=row["has_eligible"], has_selected=row["has_selected"],
                        has_plan=row["has_plan"], has_output=row["has_output"])

    def next_action(self, goal_id: str) -> Action:
        return next_action(self.view(goal_id))

    # -- state changes ---------------------------------------------------------------
    def transition(self, goal_id: str, target: Status,
                   changes: GoalChanges | None = None) -> None:
        """Validate, then move the goal; an invalid move raises and writes nothing."""
        current = self.status(goal_id)
        check_transition(current, target)
        if (current, target) in RESUME_TRANSITIONS:
            self.run.store_pending()  # the guard reads what a spend writes (the output)
        if (current, target) in RESUME_TRANSITIONS | COMPOSITE_TRANSITIONS:
            self._check_guarded(goal_id, current, target)
        # the step's artifacts, attempt and spend ride the transition: one commit; a goal
        # that resolves gives its unspent budget back to its parent in it
        returned = self.run.riding_id("budget", salt="returned") \
            if target == Status.RESOLVED else None
        self.run.commit("goal/transition", {"goal_id": goal_id, "from": current.value,
                                            "to": target.value,
                                            "changes": step_changes(changes),
                                            "return_id": returned},
                        what=f"{goal_id}: {current} -> {target}")

    def _check_guarded(self, goal_id: str, current: Status, target: Status) -> None:
        """Resumption may only enter the step next_action names (B5: no skipping);
        composite resolution needs children, all of them resolved."""
        view = self.view(goal_id)
        if (current, target) in COMPOSITE_TRANSITIONS:
            children = self.store.run("dag/children", {"goal_id": goal_id})
            if not children or any(c["status"] != Status.RESOLVED for c in children):
                raise InvalidTransitionError(
                    f"{goal_id} cannot be resolved from pending: it needs children, all resolved")
            return
        action = next_action(view)
        if ACTION_STATE.get(action) != target:
            raise InvalidTransitionError(
                f"{current} -> {target} would skip a step: next_action is {action}")

    def update(self, goal_id: str, status: Status, changes: GoalChanges,
               consumes: bool = True) -> None:
        """Change step fields of a goal that stays in ``status`` (one guarded commit)."""
        self.run.commit("goal/update", {
            "goal_id": goal_id, "status": status.value, "changes": step_changes(changes),
        }, what=f"update {goal_id} in {status}", consumes=consumes)

    def reopen(self, goal_id: str, target: Status,
               changes: GoalChanges | None = None) -> Reopening:
        """Backtrack to this goal: reopen it, invalidate its subtree and take back what the
        subtree had not spent; the goals that consumed what it shipped (dependents, through
        its resolved ancestors too) go back to pending to be redone. Returns how many
        descendants were invalidated (their attempts and logs are kept) and which goals
        are redone."""
        current = self.status(goal_id)
        check_reopen(current, target)
        rows = self.run.commit("goal/reopen", {
            "goal_id": goal_id, "from_states": [current.value], "to": target.value,
            "changes": step_changes(changes), "event_id": self.run.new_id("budget", "reclaim"),
        }, what=f"reopen {goal_id}")
        return Reopening(int(rows[0]["invalidated"]), list(rows[0]["redone"]))


def step_changes(changes: GoalChanges | None) -> dict[str, Any]:
    """The graph properties a change writes (nothing for no change)."""
    return changes.to_properties() if changes is not None else {}


def _summarize(description: str, limit: int = 120) -> str:
    """Boot-time summary: the first line, truncated (a resolver may propose a better one)."""
    first = " ".join(description.split())
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


__all__ = ["STEP_FIELDS", "CommitRejected", "GoalChanges", "GoalNode", "GoalSpec", "GoalTree",
           "Reopening", "UnknownGoalError", "step_changes"]


def _verified(goal_id: str, checked: Mapping[str, Any]) -> dict[str, Any]:
    """What a pending verification (``StepBuffer.pending_verification``) changes on the goal."""
    params = checked["params"]
    found: dict[str, Any] = {}
    for row in params["sigma_paths"]:
        if row["id"] == goal_id:
            found["sigma_path"] = row["sigma_path"]
    if checked["goal_id"] == goal_id:
        found |= {"verification": params["verification"], "sigma_v": params["sigma_v"]}
    return found
