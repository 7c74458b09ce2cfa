"""Registry in the graph, the self-model, and codex-tools-0 running tests in its sandbox."""

from __future__ import annotations

import shutil
import uuid

import pytest

from kernel.core.budget import Amount, BudgetEnforcer
from kernel.core.goals import GoalSpec, GoalTree
from kernel.core.registry import Registry, ResolverSpec, UnknownResolverError
from kernel.core.run import Run
from kernel.protocol import PermanentError, ResolveRequest, RetryableError, with_retries
from kernel.schema import init_schema
from resolvers.codex_tools import CodexTools
from resolvers.sandbox.runner import default_workspace_root
from resolvers.self_model import SelfModel
from tests.sandbox_support import needs_sandbox


@pytest.fixture
def registry(embedded_store) -> Registry:
    init_schema(embedded_store)
    return Registry(embedded_store)


def test_boot_resolvers_are_registered_with_their_capabilities(registry: Registry) -> None:
    claude = registry.get("resolver:claude-code-0")
    assert claude["built_by"] == "boot" and "decompose" in claude["provides"]
    assert claude["q_completeness"] == 0.5
    assert [c.id for c in registry.candidates(["test_execution"])] == ["resolver:codex-tools-0"]


def test_ranking_is_match_then_success_then_quality_then_cost_then_id(registry: Registry) -> None:
    for name, quality, cost in (("b-tool", 0.9, 0.5), ("a-tool", 0.9, 0.5), ("c-tool", 0.2, 0.0)):
        registry.register(ResolverSpec(id=f"resolver:{name}", label=name,
                                       capabilities=["fault_localization", "execute_code"],
                                       quality={"completeness": quality},
                                       cost_per_invocation=cost))
    ranked = [c.id for c in registry.candidates(["fault_localization", "execute_code"])]
    assert ranked[:3] == ["resolver:a-tool", "resolver:b-tool", "resolver:c-tool"]
    assert ranked[3] == "resolver:codex-tools-0"  # matches one of two capabilities
    # three verified successes (verification writes these counts; see the KG tests)
    registry.store.execute_adhoc(
        "MATCH (r:Resolver {id: 'resolver:c-tool'}) SET r.usage_count = 3, r.success_count = 3",
        {}, write=True)
    ranked = [c.id for c in registry.candidates(["fault_localization", "execute_code"])]
    assert ranked[0] == "resolver:c-tool"  # empirical success beats quality


def test_re_registering_refreshes_provides_edges(registry: Registry) -> None:
    spec = ResolverSpec(id="resolver:x", label="x", capabilities=["a", "b"])
    registry.register(spec)
    registry.register(spec.model_copy(update={"capabilities": ["b", "c"]}))
    assert registry.get("resolver:x")["provides"] == ["b", "c"]
    with pytest.raises(UnknownResolverError):
        registry.get("resolver:nope")
    with pytest.raises(ValueError, match="quality axes"):
        registry.register(ResolverSpec(id="resolver:y", label="y", quality={"speed": 1.0}))


def test_the_self_model_reports_the_graph_for_free(registry: Registry) -> None:
    run = Run.start(registry.store, "self")
    goal = GoalTree(run).create_root(GoalSpec("know thyself"))
    BudgetEnforcer(run).allocate_root(goal, Amount(1_500_000, 30_000))
    model = SelfModel(run)
    request = ResolveRequest(operation="self_model", goal_id=goal)
    assert model.estimate_cost_time(request).cost_usd == 0
    report = model.resolve(request)
    assert report.cost_usd == 0
    assert {r["id"] for r in report.output["resolvers"]} >= {"resolver:claude-code-0",
                                                             "resolver:self-model-0"}
    assert "test_execution" in report.output["capabilities"]
    assert report.output["budget"] == {"goal_id": goal, "cost_usd": 1.5, "seconds": 30.0}


def test_retryable_errors_are_retried_and_permanent_ones_are_not() -> None:
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise RetryableError("rate limited")
        return "ok"

    slept: list[float] = []
    assert with_retries(flaky, delays=(1, 2, 4), sleep=slept.append) == "ok"
    assert slept == [1, 2]

    def broken() -> str:
        raise PermanentError("bad request", failure_mode="invalid_request")

    with pytest.raises(PermanentError):
        with_retries(broken, sleep=slept.append)
    assert slept == [1, 2]


@needs_sandbox
def test_codex_tools_runs_tests_in_its_sandbox() -> None:
    workspace = default_workspace_root() / f"codex-{uuid.uuid4().hex[:8]}"
    try:
        tools = CodexTools(workspace)
        request = ResolveRequest(operation="resolve", goal_id="node:x", payload={
            "files": {"topn.py": "def top(rows, n):\n    return sorted(rows)[:n]\n",
                      "test_topn.py": "from topn import top\n\ndef test_top():\n"
                                      "    assert top([3, 1, 2], 2) == [1, 2]\n"},
            "commands": [["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "test_topn.py"]]})
        assert tools.estimate_cost_time(request).cost_usd == 0.01
        result = tools.resolve(request)
        assert result.output["passed"] is True, result.output
        refused = tools.resolve(ResolveRequest(operation="resolve", goal_id="node:x",
                                               payload={"commands": [["curl", "x"]]}))
        assert refused.output["passed"] is False
        assert refused.output["results"][0]["reason"] == "BINARY_NOT_ALLOWED"
        with pytest.raises(PermanentError, match="not a plain relative path"):
            tools.resolve(ResolveRequest(operation="resolve", goal_id="node:x",
                                         payload={"files": {"../escape.py": "x"}}))
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
