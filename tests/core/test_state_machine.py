"""The node state machine: only listed transitions, next_action as specified,
and no sequence of calls through the real store reaches an invalid state."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from pydantic import ValidationError

from kernel.core.goals import GoalChanges, GoalSpec, GoalTree
from kernel.core.run import Run
from kernel.core.state_machine import (
    COMPOSITE_TRANSITIONS,
    REOPEN_FROM,
    REOPEN_TO,
    RESUME_TRANSITIONS,
    SPEC_TRANSITIONS,
    TRANSITIONS,
    Action,
    InvalidTransitionError,
    NodeView,
    Status,
    next_action,
)
from kernel.schema import init_schema
from kernel.settings import KernelSettings
from kernel.store import open_store
from tests.core.conftest import make_root

S = Status


def test_the_spec_transitions_are_all_present() -> None:
    assert len(SPEC_TRANSITIONS) == 14
    assert SPEC_TRANSITIONS <= TRANSITIONS
    assert (S.PENDING, S.RESOLVED) in TRANSITIONS  # composite resolution, documented
    assert (S.PENDING, S.VERIFYING) in TRANSITIONS  # resumption, documented
    assert (S.RESOLVED, S.PENDING) not in TRANSITIONS
    assert not any(src in (S.RESOLVED, S.INFEASIBLE) for src, _ in TRANSITIONS)


@pytest.mark.parametrize(("view", "action"), [
    (NodeView(S.PENDING, has_unresolved_dependencies=True), Action.WAIT),
    (NodeView(S.PENDING), Action.IDENTIFY_CONSTRAINTS),
    (NodeView(S.PENDING, has_eligible=True), Action.SELECT_CONSTRAINTS),
    (NodeView(S.PENDING, has_eligible=True, has_selected=True), Action.SELECT_RESOLVER),
    (NodeView(S.PENDING, has_eligible=True, has_selected=True, has_plan=True), Action.RESOLVE),
    (NodeView(S.PENDING, has_eligible=True, has_selected=True, has_plan=True, has_output=True),
     Action.VERIFY),
    (NodeView(S.IDENTIFYING_CONSTRAINTS), Action.IDENTIFY_CONSTRAINTS),
    (NodeView(S.SELECTING_CONSTRAINTS), Action.SELECT_CONSTRAINTS),
    (NodeView(S.SELECTING_RESOLVER), Action.SELECT_RESOLVER),
    (NodeView(S.RESOLVING), Action.RESOLVE),
    (NodeView(S.VERIFYING), Action.VERIFY),
    (NodeView(S.DECOMPOSING), Action.DECOMPOSE),
    (NodeView(S.GATED), Action.WAIT),
    (NodeView(S.RESOLVED), Action.WAIT),
    (NodeView(S.INFEASIBLE), Action.WAIT),
])
def test_next_action_follows_the_spec(view: NodeView, action: Action) -> None:
    assert next_action(view) == action


def test_invalid_transition_raises_and_changes_nothing(tree: GoalTree) -> None:
    root = make_root(tree)
    seq = tree.run.seq
    with pytest.raises(InvalidTransitionError, match="needs children, all resolved"):
        tree.transition(root, S.RESOLVED)
    with pytest.raises(InvalidTransitionError, match="would skip a step"):
        tree.transition(root, S.RESOLVING)
    assert tree.status(root) == S.PENDING
    assert tree.run.seq == seq
    with pytest.raises(ValidationError, match="cost_spent"):  # a budget cache, not a step field
        tree.transition(root, S.IDENTIFYING_CONSTRAINTS, GoalChanges.model_validate(
            {"cost_spent": 0}))
    assert tree.status(root) == S.PENDING


def test_thresholds_are_copied_at_creation(run: Run) -> None:
    tree = GoalTree(run, tau_local=0.8, tau_global=0.6)
    root = make_root(tree)
    child = tree.create_child(root, GoalSpec("part"))
    later = GoalTree(run, tau_local=0.1, tau_global=0.1)
    grandchild = later.create_child(child, GoalSpec("part of part"))
    for goal_id in (root, child, grandchild):
        goal = tree.get(goal_id)
        assert (goal.tau_local, goal.tau_global) == (0.8, 0.6)
    node = tree.get(grandchild)
    assert (node.depth, node.parent_id, node.root_id, node.status) == (2, child, root, "pending")
    assert node.attempt_count == 0 and node.verification is None


@settings(max_examples=15, stateful_step_count=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
class GoalLifecycle(RuleBasedStateMachine):
    """Random transition and reopen requests against the real store: valid ones apply,
    invalid ones raise and leave the stored status exactly as the model predicts."""

    @initialize()
    def start(self) -> None:
        self.store = open_store(KernelSettings(data_dir=_DATA_DIR[0], graph_name="lifecycle"))
        self.store.drop_all()
        init_schema(self.store)
        self.tree = GoalTree(Run.start(self.store, "lifecycle"))
        self.goal = make_root(self.tree)
        self.child = self.tree.create_child(self.goal, GoalSpec("child"))
        self.model = S.PENDING

    @rule(status=st.sampled_from(list(Status)))
    def transition(self, status: Status) -> None:
        # This goal has no step outputs and an unresolved child, so neither resumption
        # nor composite resolution is ever allowed for it.
        if (self.model, status) in TRANSITIONS - RESUME_TRANSITIONS - COMPOSITE_TRANSITIONS:
            self.tree.transition(self.goal, status)
            self.model = status
        else:
            with pytest.raises(InvalidTransitionError):
                self.tree.transition(self.goal, status)

    @rule(status=st.sampled_from(sorted(REOPEN_TO)))
    def reopen(self, status: Status) -> None:
        if self.model in REOPEN_FROM:
            self.tree.reopen(self.goal, status)
            self.model = status
            assert self.tree.status(self.child) == S.PENDING
            assert self.tree.get(self.child).stale is True
        else:
            with pytest.raises(InvalidTransitionError):
                self.tree.reopen(self.goal, status)

    @invariant()
    def stored_status_matches_the_model(self) -> None:
        if hasattr(self, "tree"):
            assert self.tree.status(self.goal) == self.model

    def teardown(self) -> None:
        if hasattr(self, "store"):
            self.store.drop_all()
            self.store.close()


_DATA_DIR: list = []


@pytest.fixture
def _lifecycle_dir(data_dir) -> None:
    _DATA_DIR[:] = [data_dir]


@pytest.mark.slow
@pytest.mark.usefixtures("_lifecycle_dir")
class TestGoalLifecycle(GoalLifecycle.TestCase):  # type: ignore[name-defined]
    pass
