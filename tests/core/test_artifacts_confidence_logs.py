"""Artifact store, confidence composition and invalidation, the tiered log, run ids."""

from __future__ import annotations

import pytest

from kernel.core.artifacts import ArtifactIntegrityError, Artifacts, BlobStore
from kernel.core.attempts import Attempts
from kernel.core.budget import Amount, BudgetEnforcer
from kernel.core.confidence import Confidence, PathNode, path_sigma, weakest_ancestor
from kernel.core.dag import Dependencies
from kernel.core.envelopes import Lineage
from kernel.core.goals import GoalSpec, GoalTree
from kernel.core.logs import TieredLog, redact
from kernel.core.run import ConcurrentRunError, Run
from kernel.core.state_machine import Status
from tests.core.conftest import make_root


def test_identical_content_is_stored_once_and_checked_on_read(tree: GoalTree, tmp_path) -> None:
    blobs = BlobStore(tmp_path / "artifacts")
    artifacts = Artifacts(tree.run, blobs)
    root = make_root(tree)
    first = artifacts.register(root, "print('hi')\n", type="code", format="python",
                               lineage=Lineage(node_id=root, resolver_id="resolver:claude-code-0"))
    second = artifacts.register(root, b"print('hi')\n", type="code", format="python",
                                lineage=Lineage(node_id=root, input_artifact_ids=[first.id]))
    assert first.sha256 == second.sha256 and first.id != second.id
    assert len(list((tmp_path / "artifacts").rglob("*"))) == 2  # one folder, one blob
    assert artifacts.read(second.id) == b"print('hi')\n"
    assert artifacts.get(second.id).lineage.input_artifact_ids == [first.id]
    tree.run.flush()  # artifacts ride the run's next commit; none comes here
    lineage = tree.store.execute_adhoc(
        "MATCH (a:Artifact {id: $a})-[:DERIVED_FROM]->(b:Artifact) RETURN b.id AS b",
        {"a": second.id}, write=False).records()
    assert lineage == [{"b": first.id}]
    path = blobs.path(first.sha256)
    path.chmod(0o644)
    path.write_bytes(b"tampered")
    with pytest.raises(ArtifactIntegrityError, match="corrupted"):
        artifacts.read(first.id)


def test_path_sigma_and_weakest_ancestor() -> None:
    assert path_sigma([0.9, None, 0.5]) == 0.45
    path = [PathNode("root", 0.9, 0), PathNode("a", 0.6, 1), PathNode("b", None, 2),
            PathNode("c", 0.6, 3)]
    assert weakest_ancestor(path) == "c"  # tie: the deepest
    assert weakest_ancestor([PathNode("x", None, 0)]) is None


def _set_sigma(tree: GoalTree, goal: str, sigma: float) -> None:
    tree.store.execute_adhoc("MATCH (g:Goal {id: $id}) SET g.sigma_v = $s", {"id": goal, "s": sigma},
                             write=True)


def test_sigma_path_is_recomputed_below_a_changed_ancestor(tree: GoalTree) -> None:
    root = make_root(tree)
    child = tree.create_child(root, GoalSpec("a"))
    leaf_a = tree.create_child(child, GoalSpec("a1"))
    leaf_b = tree.create_child(root, GoalSpec("b"))
    for goal, sigma in ((root, 0.9), (child, 0.8), (leaf_a, 0.5), (leaf_b, 1.0)):
        _set_sigma(tree, goal, sigma)
    confidence = Confidence(tree.run)
    values = confidence.recompute_subtree(root)
    assert values == {root: 0.9, child: 0.72, leaf_a: 0.36, leaf_b: 0.9}
    assert confidence.system_sigma() == 0.36
    _set_sigma(tree, child, 1.0)
    assert confidence.recompute_subtree(child) == {child: 0.9, leaf_a: 0.45}
    assert tree.get(leaf_a).sigma_path == 0.45
    assert confidence.system_sigma() == 0.45
    assert weakest_ancestor(confidence.path(leaf_a)) == leaf_a


def test_reopening_invalidates_the_subtree_but_keeps_history(tree: GoalTree) -> None:
    root = make_root(tree)
    BudgetEnforcer(tree.run).allocate_root(root, Amount(1000, 1000))
    kids = [tree.create_child(root, GoalSpec(f"k{i}")) for i in range(2)]
    Dependencies(tree.store).add(tree.run, root, [(kids[1], kids[0])])
    attempts = Attempts(tree.run)
    for kid in kids:
        tree.transition(kid, Status.IDENTIFYING_CONSTRAINTS)
    tree.store.execute_adhoc(
        "MATCH (g:Goal) WHERE g.id IN $ids SET g.status = 'resolving', g.sigma_v = 0.4, "
        "g.output_artifact_id = 'artifact:x'", {"ids": kids}, write=True)
    attempt = attempts.open(kids[0], "resolver:claude-code-0")
    log = TieredLog(tree.run)
    log.flow(kids[0], "resolved once")
    tree.store.execute_adhoc("MATCH (g:Goal {id: $id}) SET g.status = 'gated'", {"id": root},
                             write=True)
    assert tree.reopen(root, Status.SELECTING_RESOLVER).invalidated == 2
    assert tree.status(root) == Status.SELECTING_RESOLVER
    for kid in kids:
        goal = tree.get(kid)
        assert goal.status == "pending" and goal.stale is True
        assert "output_artifact_id" not in goal and "sigma_v" not in goal
    assert Dependencies(tree.store).unresolved(kids[1]) == []
    assert [a.id for a in attempts.of_goal(kids[0])] == [attempt.id]
    assert [e["summary"] for e in log.entries()] == ["resolved once"]


def test_secrets_never_reach_the_log(tree: GoalTree) -> None:
    root = make_root(tree)
    log = TieredLog(tree.run)
    log.io(root, "resolver:claude-code-0", "resolve", {
        "tokens": 4523, "api_key": "sk-ant-api03-abcdefghijklmnop", "prompt": "the raw prompt",
        "headers": {"Authorization": "Bearer abc.def.ghi.jkl"},
        "note": "used key sk-ant-api03-zzzzzzzzzzzzzzzz today"})
    detail = log.entries()[0]["detail"]
    assert "sk-ant" not in detail and "abc.def" not in detail and "raw prompt" not in detail
    assert '"tokens": 4523' in detail and "redacted_by_default" in detail
    raw = TieredLog(tree.run, raw_io=True)
    raw.io(root, "r", "resolve", {"prompt": "keep me", "token": "hide me"})
    kept = [e["detail"] for e in raw.entries() if "keep me" in (e["detail"] or "")]
    assert kept and "hide me" not in kept[0]
    assert redact({"nested": [{"password": "x"}]}) == {"nested": [{"password": "[redacted]"}]}


def test_replaying_commits_derives_the_same_ids(graph) -> None:
    first = Run.start(graph, "a")
    twin = Run(graph, "run:replayed", first.base_ms, 0)
    copy = Run(graph, "run:replayed", first.base_ms, 0)
    assert twin.new_id("goal") == copy.new_id("goal")
    assert twin.new_id("goal") != first.new_id("goal")
    assert twin.new_id("goal").startswith("node:")


def test_a_second_process_on_the_same_run_is_refused(tree: GoalTree) -> None:
    root = make_root(tree)
    other = Run.load(tree.store, tree.run.run_id)
    GoalTree(other).transition(root, Status.IDENTIFYING_CONSTRAINTS)
    with pytest.raises(ConcurrentRunError, match="another process"):
        tree.transition(root, Status.SELECTING_CONSTRAINTS)
